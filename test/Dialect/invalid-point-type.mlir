// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid point types: the value at one point of a node, udf or !pdg.value must be a ranked tensor.

pdg.graph @point_type_not_tensor {
  pdg.dim @t < 8
  // expected-error @+1 {{a node's value at one point must be a ranked tensor, got 'f32'}}
  %y = pdg.node "y" [t] -> f32 {
    %c = arith.constant 0.0 : f32
    pdg.yield %c : f32
  }
}

// -----

pdg.graph @udf_point_type_not_tensor {
  pdg.dim @t < 8
  // expected-error @+1 {{a udf's value at one point must be a ranked tensor, got 'tensor<*xf32>'}}
  %y = pdg.udf "f" [t] -> tensor<*xf32>
}

// -----

pdg.graph @value_point_not_tensor {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %x = pdg.input "x" : !pdg.value<[], f32>
}

// -----

pdg.graph @value_unranked_point {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %x = pdg.input "x" : !pdg.value<[], tensor<*xf32>>
}
