// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses in the generic form: wrong dim or symbol counts, semi-affine maps, fewer accesses than inputs.

// The generic form can state an access over the wrong number of dims.
pdg.graph @access_over_wrong_dims {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access #0 is written over 2 dims and 0 symbols, but the node has 1 dims and 0 symbols}}
  %y = "pdg.node"(%x) <{accesses = [#pdg.access<(d0, d1) : [d0]>], conditions = [affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
  ^bb0(%a: tensor<f32>):
    "pdg.yield"(%a) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @access_over_wrong_symbols {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access #1 is written over 1 dims and 1 symbols, but the node has 1 dims and 0 symbols}}
  %u = "pdg.udf"(%x, %x) <{accesses = [#pdg.access<(d0) : [d0]>, #pdg.access<(d0)[s0] : [s0 - 1]>], callee = "f", symbols = []}> : (!pdg.value<[t], tensor<f32>>, !pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

// A semi-affine #pdg.access parses on its own, but not as an op's access.
pdg.graph @semi_affine_generic {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'pdg.udf' op access 'x'[t * t] must be affine}}
  %u = "pdg.udf"(%x) <{accesses = [#pdg.access<(d0) : [d0 * d0]>], callee = "f", symbols = []}> : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @access_count_mismatch {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{has 1 inputs but 0 accesses}}
  %u = "pdg.udf"(%x) <{accesses = [], callee = "f", symbols = []}> : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}
