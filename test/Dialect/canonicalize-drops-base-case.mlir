// RUN: pdg-opt %s --canonicalize || not pdg-opt %s
// Canonicalization must not turn IR that verifies into IR that does not (known bug).
//
// BUG: the verifier counts the case `(1 == 0)` as the base case of the
// recurrence, so the input verifies, although no case defines y at t = 0.
// DropDeadCasesAndInputs then drops that never-true case and the result fails
// to verify with "recurrence without a base case: every case of 'y' reads
// the node itself". Either the verifier should reject the input (a base case
// that can never hold), or canonicalization should keep it. The RUN line

pdg.graph @false_base_case {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] -> tensor<f32>
    case (1 == 0) (%a = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
