// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid standalone #pdg.access attributes: names bound twice or reserved, unknown names, zero divisors.

// Standalone #pdg.access: names are bound once, dims and symbols apart.
// expected-error @+1 {{'d0' cannot be bound twice or reserved}}
#twice = #pdg.access<(d0, d0) : [d0]>

// -----

// expected-error @+1 {{'d0' is bound both as a dim and as a symbol}}
#clash = #pdg.access<(d0)[d0] : [d0]>

// -----

// expected-error @+1 {{'max' cannot be bound twice or reserved}}
#reserved = #pdg.access<(max) : [max]>

// -----

// expected-error @+1 {{unknown dim or symbol 'd1'; known: d0 / s0}}
#unknown = #pdg.access<(d0)[s0] : [d1]>

// -----

// expected-error @+1 {{'floordiv' needs a positive constant divisor, got 0}}
#zero = #pdg.access<(d0) : [d0 floordiv 0 : 4]>
