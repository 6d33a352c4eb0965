// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid recurrences: no base case, unguarded reads of earlier points of the node itself, guards too weak.

// The only case reads the node itself: no point can ever be computed first.
pdg.graph @no_base_case {
  pdg.dim @t < 8
  // expected-error @+1 {{recurrence without a base case: every case of 'y' reads the node itself; add a case that does not, e.g. case (t == 0)}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t >= 1) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

pdg.graph @every_case_reads_itself {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{recurrence without a base case: every case of 'y' reads the node itself; add a case that does not, e.g. case (t == 0)}}
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t >= 1) (%p = %y[b, t - 1] : !pdg.value<[b, t], tensor<f32>>, %v = %x[b, t] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    case (b >= 1) (%p = %y[b - 1, t] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// The recurrent case is not guarded: at t = 0 it reads y[-1].
pdg.graph @unguarded_recurrence {
  pdg.dim @t < 8
  // expected-error @+1 {{recurrence without a base case: case #1 reads 'y'[t - 1], which is outside the domain when t < 1; guard this case with (t >= 1) and define t < 1 in another case, e.g. case (t == 0)}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t >= 4) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t <= 3) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}

// -----

// The guard must cover the whole distance of the read.
pdg.graph @guard_too_weak {
  pdg.dim @t < 8
  // expected-error @+1 {{case #1 reads 'y'[t - 2], which is outside the domain when t < 2; guard this case with (t >= 2)}}
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 1) (%p = %y[t - 2] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
}
