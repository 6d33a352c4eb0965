// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses: unknown symbols, and static dims that have no bound symbol.

pdg.graph @unknown_symbol {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{uses unknown dim or symbol 'N'; accesses and conditions may use the node's dims [t] and the bound symbols of launch or dynamic dims}}
  %y = pdg.node "y" [t] (%a = %x[N - 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

// A static dim has no bound symbol: its size is written as a number.
pdg.graph @static_dim_is_no_symbol {
  pdg.dim @t < 8
  pdg.dim @s < 4
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{uses unknown dim or symbol 'S'}}
  %y = pdg.node "y" [s] (%a = %x[0 : S] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}
