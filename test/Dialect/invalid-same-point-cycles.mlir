// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid same-point cycles: nodes and udfs that depend on themselves at the same point, directly or through slices.

// Two nodes reading each other at the same point.
pdg.graph @same_point_cycle {
  pdg.dim @t < 8
  %a = pdg.node "a" [t] (%v = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  // expected-error @+1 {{depends on itself at the same point through 'a' -> 'b' -> 'a'; one read in the cycle must be of an earlier point, e.g. t - 1 or a slice ending at t}}
  %b = pdg.node "b" [t] (%v = %a[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
}

// -----

// A longer cycle, through dims that only some of the values have.
pdg.graph @same_point_cycle_of_three {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %a = pdg.node "a" [b, t] (%v = %c[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  // expected-error @+1 {{depends on itself at the same point through 'a' -> 'c' -> 'bb' -> 'a'}}
  %bb = pdg.node "bb" [b, t] (%v = %a[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c = pdg.node "c" [t] (%v = %bb[0, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
}

// -----

// A slice that includes the current point is a same-point self read.
pdg.graph @self_read_through_slice {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{depends on itself at the same point through 'y' -> 'y'}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) (%a = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %y[0 : t + 1] : !pdg.value<[t], tensor<f32>>) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
}

// -----

// Reading itself at the very same point, in a case next to a base case.
pdg.graph @self_read_same_point {
  pdg.dim @t < 8
  // expected-error @+1 {{depends on itself at the same point through 'y' -> 'y'}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%p = %y[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// A cycle through a host callback.
pdg.graph @cycle_through_udf {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] (%v = %u[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  // expected-error @+1 {{'pdg.udf' op depends on itself at the same point through 'y' -> udf 'f' -> 'y'}}
  %u = pdg.udf "f" [t] (%y[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}
