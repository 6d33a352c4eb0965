// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses: more or fewer entries than the producer has dims.

pdg.graph @too_many_entries {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[t, 0] has 2 entries, but 'x' is defined over [t] (1 dims); give one index or slice per dim}}
  %y = pdg.node "y" [t] (%a = %x[t, 0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @too_few_entries {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{access 'x'[t] has 1 entries, but 'x' is defined over [b, t] (2 dims)}}
  %y = pdg.node "y" [b, t] (%a = %x[t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @empty_access_of_nonempty_domain {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{access 'x'[] has 0 entries, but 'x' is defined over [t] (1 dims)}}
  %u = pdg.udf "f" [] (%x[] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}
