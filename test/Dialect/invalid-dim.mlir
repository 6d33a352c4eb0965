// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.dim: sizes, bound symbols, `until` conditions, placement.

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

// -----

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

// -----

pdg.graph @until_as_symbol {
  // expected-error @+1 {{expected the name of the bound symbol, e.g. `launch B`}}
  pdg.dim @t < dynamic until %d : !pdg.value<[t], tensor<i1>>
}

// -----

pdg.graph @unknown_bound_kind {
  // expected-error @+1 {{expected a static bound (an integer), 'launch' or 'dynamic', got 'runtime'}}
  pdg.dim @t < runtime T
}

// -----

pdg.graph @duplicate_dim {
  // expected-note @+1 {{see existing symbol definition here}}
  pdg.dim @t < 8
  // expected-error @+1 {{redefinition of symbol named 't'}}
  pdg.dim @t < launch T
}

// -----

// expected-error @+1 {{'pdg.dim' op expects parent op 'pdg.graph'}}
pdg.dim @t < 8
