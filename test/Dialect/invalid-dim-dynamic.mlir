// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid dynamic pdg.dim: a missing or ill-typed `until` condition, `until` as the bound symbol.

pdg.graph @dynamic_without_until {
  // expected-error @+1 {{dynamic dim 't' needs a condition that ends it, e.g. `until %eos : !pdg.value<[t], tensor<i1>>`}}
  pdg.dim @t < dynamic T max 64
}

// -----

pdg.graph @until_over_other_dims {
  pdg.dim @b < 4
  // expected-error @+1 {{the 'until' condition of dim 't' must be defined over it, but its domain is [b]}}
  pdg.dim @t < dynamic T until %d : !pdg.value<[b], tensor<i1>>
  %d = pdg.input "d" : !pdg.value<[b], tensor<i1>>
}

// -----

pdg.graph @until_not_i1 {
  // expected-error @+1 {{the 'until' condition of dim 't' must be a tensor<i1> per point, got 'tensor<i32>'}}
  pdg.dim @t < dynamic T until %d : !pdg.value<[t], tensor<i32>>
  %d = pdg.input "d" : !pdg.value<[t], tensor<i32>>
}

// -----

pdg.graph @until_not_scalar {
  // expected-error @+1 {{the 'until' condition of dim 't' must be a tensor<i1> per point, got 'tensor<1xi1>'}}
  pdg.dim @t < dynamic T until %d : !pdg.value<[t], tensor<1xi1>>
  %d = pdg.input "d" : !pdg.value<[t], tensor<1xi1>>
}

// -----

pdg.graph @until_not_a_value {
  %c = arith.constant dense<true> : tensor<i1>
  // expected-error @+1 {{operand #0 must be}}
  "pdg.dim"(%c) <{bound = "T", kind = #pdg<bound dynamic>, sym_name = "t"}> : (tensor<i1>) -> ()
}

// -----

pdg.graph @until_as_symbol {
  // expected-error @+1 {{expected the name of the bound symbol, e.g. `launch B`}}
  pdg.dim @t < dynamic until %d : !pdg.value<[t], tensor<i1>>
}
