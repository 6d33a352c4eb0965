// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid domains: reserved words as dim names, a dim listed twice (pdg.node, pdg.udf, !pdg.value).

pdg.graph @reserved_dim_name {
  pdg.dim @t < 8
  // expected-error @+1 {{'max' is reserved and cannot name a dim}}
  %y = pdg.node "y" [max] -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @reserved_keyword_dim {
  // expected-error @+1 {{'case' is reserved and cannot name a dim}}
  %y = pdg.udf "f" [t, case] -> tensor<f32>
}

// -----

pdg.graph @duplicate_domain_dim {
  pdg.dim @t < 8
  // expected-error @+1 {{dim 't' appears twice in the domain}}
  %y = pdg.node "y" [t, t] -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @value_dim_twice {
  pdg.dim @t < 8
  // expected-error @+1 {{dimension 't' appears twice in the domain}}
  %x = pdg.input "x" : !pdg.value<[t, t], tensor<f32>>
}
