// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid slices: empty or negative extents, max/min bounds in the wrong place.

pdg.graph @empty_slice {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{slice 't : t' in access 'x'[t : t] is empty (size 0); a slice 'lb : ub' reads lb <= i < ub}}
  %y = pdg.node "y" [t] (%a = %x[t : t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @negative_slice {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{slice '5 : 3' in access 'x'[5 : 3] is negative (size -2)}}
  %y = pdg.node "y" [t] (%a = %x[5 : 3] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

// Every pair of a max/min bound list is checked.
pdg.graph @empty_bound_pair {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{slice 't + 1 : t + 1' in access 'x'[max(0, t + 1) : min(t + 1, 8)] is empty (size 0)}}
  %u = pdg.udf "f" [t] (%x[max(0, t + 1) : min(t + 1, 8)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @max_as_point {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{max(...) is only allowed as the lower bound of a slice 'lb : ub'}}
  %y = pdg.node "y" [t] (%a = %x[max(t, 1)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @min_as_lower_bound {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'min' is reserved and cannot appear here}}
  %u = pdg.udf "f" [t] (%x[min(t, 1) : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}
