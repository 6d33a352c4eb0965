// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.node case bodies (generic form): block argument types and counts that disagree with the accesses.

// In the custom form block arguments get their type from the access; the
// generic form can disagree. A constant slice has a static size.
pdg.graph @body_arg_slice_type {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{body argument #0 of case #0 has type 'tensor<?xf32>', but access 'x'[t - 3 : t + 1] gives 'tensor<4xf32>'}}
  %y = "pdg.node"(%x) <{accesses = [#pdg.access<(d0) : [d0 - 3 : d0 + 1]>], conditions = [affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
  ^bb0(%a: tensor<?xf32>):
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @body_arg_point_type {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{body argument #1 of case #1 has type 'tensor<2xf32>', but access 'x'[t] gives 'tensor<f32>'}}
  %y = "pdg.node"(%x, %x, %x) <{accesses = [#pdg.access<(d0) : [d0]>, #pdg.access<(d0) : [0]>, #pdg.access<(d0) : [d0]>], conditions = [affine_set<(d0) : (d0 == 0)>, affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
  ^bb0(%a: tensor<f32>):
    "pdg.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%b: tensor<f32>, %c: tensor<2xf32>):
    "pdg.yield"(%b) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>, !pdg.value<[t], tensor<f32>>, !pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @arguments_vs_inputs {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{case bodies take 0 arguments in all, but the node has 1 inputs}}
  %y = "pdg.node"(%x) <{accesses = [#pdg.access<(d0) : [d0]>], conditions = [affine_set<(d0) : (0 >= 0)>], name = "y", symbols = []}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : (!pdg.value<[t], tensor<f32>>) -> !pdg.value<[t], tensor<f32>>
}
