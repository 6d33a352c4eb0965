// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid domains: dims not declared in the graph (pdg.node, pdg.udf, pdg.input, pdg.output).

pdg.graph @unknown_domain_dim {
  pdg.dim @t < 8
  // expected-error @+1 {{uses unknown dim 'u' in the domain of node 'y' [t, u]; declare it in the graph, e.g. `pdg.dim @u < 16`}}
  %y = pdg.node "y" [t, u] -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
}

// -----

pdg.graph @unknown_udf_domain_dim {
  // expected-error @+1 {{uses unknown dim 'b' in the domain of udf 'f' [b]}}
  %y = pdg.udf "f" [b] -> tensor<f32>
}

// -----

pdg.graph @input_unknown_dim {
  pdg.dim @t < 8
  // expected-error @+1 {{'pdg.input' op uses unknown dim 'u' in the domain of input 'x' [t, u]; declare it in the graph, e.g. `pdg.dim @u < 16`}}
  %x = pdg.input "x" : !pdg.value<[t, u], tensor<f32>>
}

// -----

// Ops are verified in order: the output comes first here.
pdg.graph @output_unknown_dim {
  // expected-error @+1 {{'pdg.output' op uses unknown dim 'b' in the domain of output 'y' [b]}}
  pdg.output "y" %x : !pdg.value<[b], tensor<f32>>
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
}
