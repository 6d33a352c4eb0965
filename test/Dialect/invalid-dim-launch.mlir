// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid launch pdg.dim: max zero, `until`, missing or reserved bound symbol.

pdg.graph @zero_max {
  // expected-error @+1 {{bound of dim 'b' must be at least 1, got 0}}
  pdg.dim @b < launch B max 0
}

// -----

pdg.graph @launch_with_until {
  // expected-error @+1 {{launch dim 't' is given when the program starts; only a dynamic dim has 'until'}}
  pdg.dim @t < launch T until %d : !pdg.value<[t], tensor<i1>>
  %d = pdg.input "d" : !pdg.value<[t], tensor<i1>>
}

// -----

pdg.graph @launch_without_symbol {
  // expected-error @+1 {{dim 'b' needs a bound symbol name}}
  "pdg.dim"() <{kind = #pdg<bound launch>, sym_name = "b"}> : () -> ()
}

// -----

pdg.graph @reserved_symbol_generic {
  // expected-error @+1 {{dim 'b' needs a bound symbol name}}
  "pdg.dim"() <{bound = "min", kind = #pdg<bound launch>, sym_name = "b"}> : () -> ()
}

// -----

pdg.graph @reserved_symbol {
  // expected-error @+1 {{expected the name of the bound symbol, e.g. `launch B`}}
  pdg.dim @b < launch max 64
}
