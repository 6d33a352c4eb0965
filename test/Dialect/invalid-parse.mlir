// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Pure parse errors: a missing node body, bad affine expressions, non-value input types, bound kinds, graph names.

pdg.graph @missing_body {
  pdg.dim @t < 8
  // expected-error @+1 {{expected '{' to begin a region}}
  %y = pdg.node "y" [t] -> tensor<f32>
}

// -----

pdg.graph @not_an_expression {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{expected an affine expression: an integer, a dim or symbol name, or '('}}
  %u = pdg.udf "f" [t] (%x[t + ] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

pdg.graph @input_not_a_value {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{an input must be a !pdg.value, got 'tensor<f32>'}}
  %u = pdg.udf "f" [t] (%x[t] : tensor<f32>) -> tensor<f32>
}

// -----

pdg.graph @unknown_bound_kind {
  // expected-error @+1 {{expected a static bound (an integer), 'launch', 'world' or 'dynamic', got 'runtime'}}
  pdg.dim @t < runtime T
}

// -----

// expected-error @+1 {{expected valid '@'-identifier for symbol name}}
pdg.graph {
}
