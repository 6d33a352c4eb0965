// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid `symbols` of pdg.node (generic form): a domain dim as a symbol, a symbol twice, a non-string symbol.

pdg.graph @dim_as_symbol {
  pdg.dim @t < 8
  // expected-error @+1 {{'t' is both a domain dim and a symbol}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0)[s0] : (0 >= 0)>], name = "y", symbols = ["t"]}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @symbol_twice {
  pdg.dim @t < launch T
  // expected-error @+1 {{symbol 'T' is listed twice}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0)[s0, s1] : (0 >= 0)>], name = "y", symbols = ["T", "T"]}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}

// -----

pdg.graph @symbol_not_a_string {
  pdg.dim @t < launch T
  // expected-error @+1 {{attribute 'symbols' failed to satisfy constraint: string array attribute}}
  %y = "pdg.node"() <{accesses = [], conditions = [affine_set<(d0)[s0] : (0 >= 0)>], name = "y", symbols = [3]}> ({
    %c = arith.constant dense<0.0> : tensor<f32>
    "pdg.yield"(%c) : (tensor<f32>) -> ()
  }) : () -> !pdg.value<[t], tensor<f32>>
}
