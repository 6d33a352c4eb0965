// pdg-vectorize refuses a dim the graph does not have (a misspelled dim
// left the graph silently unbatched).
// RUN: pdg-opt %s --split-input-file --verify-diagnostics --pdg-vectorize=dim=zz
// RUN: pdg-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(pdg.graph(pdg-vectorize{dim=zz}))'

// expected-error @+1 {{'pdg.graph' op pdg-vectorize: no dim 'zz' to fold; its dims: b, t}}
pdg.graph @g {
  pdg.dim @b < launch B
  pdg.dim @t < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  pdg.output "x" %x : !pdg.value<[b], tensor<f32>>
}

// -----

// expected-error @+1 {{pdg-vectorize: no dim 'zz' to fold; the graph has no dims}}
pdg.graph @no_dims {
}
