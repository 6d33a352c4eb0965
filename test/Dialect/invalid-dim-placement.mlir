// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.dim placement: a dim declared twice, a dim outside a pdg.graph.

pdg.graph @duplicate_dim {
  // expected-note @+1 {{see existing symbol definition here}}
  pdg.dim @t < 8
  // expected-error @+1 {{redefinition of symbol named 't'}}
  pdg.dim @t < launch T
}

// -----

// expected-error @+1 {{'pdg.dim' op expects parent op 'pdg.graph'}}
pdg.dim @t < 8
