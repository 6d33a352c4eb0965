// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid bound symbols of launch and dynamic dims: a dim's own or another dim's name, a symbol bound twice.

pdg.graph @bound_symbol_is_own_dim {
  // expected-error @+1 {{bound symbol 't' is also the name of a dim; use another name, e.g. 'T'}}
  pdg.dim @t < launch t
}

// -----

// The clash is found whatever the order of the two dims.
pdg.graph @bound_symbol_is_later_dim {
  // expected-error @+1 {{bound symbol 'len' is also the name of a dim; use another name, e.g. 'LEN'}}
  pdg.dim @b < launch len
  pdg.dim @len < 8
}

// -----

pdg.graph @duplicate_bound_symbol {
  // expected-note @+1 {{first bound here}}
  pdg.dim @b < launch N
  // expected-error @+1 {{bound symbol 'N' is already the bound of 'b'}}
  pdg.dim @c < launch N max 4
}

// -----

pdg.graph @duplicate_bound_symbol_dynamic {
  pdg.dim @b < launch T
  // expected-error @+1 {{bound symbol 'T' is already the bound of 'b'}}
  pdg.dim @t < dynamic T until %d : !pdg.value<[t], tensor<i1>>
  %d = pdg.input "d" : !pdg.value<[t], tensor<i1>>
}
