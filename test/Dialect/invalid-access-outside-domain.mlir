// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid accesses: graph dims outside the consumer's domain (pdg.node, pdg.udf).

// A dim of the graph that is not in the consumer's domain cannot be read.
pdg.graph @dim_outside_domain {
  pdg.dim @t < 8
  pdg.dim @i < 8
  %x = pdg.input "x" : !pdg.value<[i], tensor<f32>>
  // expected-error @+1 {{uses dim 'i', which is outside the consumer's domain [t]; add 'i' to the domain, or read a fixed point or a slice of it}}
  %y = pdg.node "y" [t] (%a = %x[i] : !pdg.value<[i], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
}

// -----

pdg.graph @udf_dim_outside_domain {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  // expected-error @+1 {{'pdg.udf' op uses dim 't', which is outside the consumer's domain [b]}}
  %u = pdg.udf "f" [b] (%x[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32>
}
