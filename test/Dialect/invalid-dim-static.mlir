// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid static pdg.dim: no size, a bound symbol or `until`, size zero.

pdg.graph @static_without_size {
  // expected-error @+1 {{'pdg.dim' op static dim 't' needs a size, e.g. `pdg.dim @t < 16`}}
  "pdg.dim"() <{kind = #pdg<bound static>, sym_name = "t"}> : () -> ()
}

// -----

pdg.graph @static_with_symbol {
  // expected-error @+1 {{a static dim has no bound symbol or 'until'}}
  "pdg.dim"() <{bound = "T", kind = #pdg<bound static>, size = 8 : i64, sym_name = "t"}> : () -> ()
}

// -----

pdg.graph @static_with_until {
  %d = pdg.input "d" : !pdg.value<[t], tensor<i1>>
  // expected-error @+1 {{a static dim has no bound symbol or 'until'}}
  "pdg.dim"(%d) <{kind = #pdg<bound static>, size = 8 : i64, sym_name = "t"}> : (!pdg.value<[t], tensor<i1>>) -> ()
}

// -----

pdg.graph @zero_size {
  // expected-error @+1 {{'pdg.dim' op bound of dim 't' must be at least 1, got 0}}
  pdg.dim @t < 0
}
