// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses: floordiv, mod and ceildiv by constants that are not positive (after folding).

pdg.graph @floordiv_zero {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'floordiv' needs a positive constant divisor, got 0}}
  %y = pdg.node "y" [t] (%a = %x[t floordiv 0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @mod_negative {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'mod' needs a positive constant divisor, got -2}}
  %y = pdg.node "y" [t] (%a = %x[t mod -2] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

// The divisor is folded before it is checked.
pdg.graph @ceildiv_folded_zero {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'ceildiv' needs a positive constant divisor, got 0}}
  %y = pdg.node "y" [t] (%a = %x[t ceildiv (t - t)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}
