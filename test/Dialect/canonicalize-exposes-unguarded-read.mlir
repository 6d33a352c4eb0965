// RUN: pdg-opt %s --canonicalize || not pdg-opt %s
// Canonicalization must not turn IR that verifies into IR that does not (known bug).
//
// BUG: `(t floordiv 2) * 2 + t mod 2 - 1` is `t - 1`, a read below the domain
// of x at t = 0 that no case guards. The verifier only recognizes reads of
// the form `dim + constant`, so the input verifies; SimplifyNodeAccesses
// rewrites the access to `t - 1` and the result fails to verify with "case #0
// reads 'x'[t - 1], which is outside the domain of 'x' when t < 1". Either the
// verifier should simplify accesses before matching, or canonicalization
// should not produce IR that fails to verify. The RUN line passes once either

pdg.graph @hidden_unguarded_read {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[(t floordiv 2) * 2 + t mod 2 - 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
