// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid pdg.udf: an empty callee, a udf reading itself, an unguarded read of an earlier point.

pdg.graph @empty_callee {
  // expected-error @+1 {{a udf needs the name of the host function it calls}}
  %u = pdg.udf "" [] -> tensor<f32>
}

// -----

pdg.graph @udf_reads_itself {
  pdg.dim @t < 8
  // expected-error @+1 {{'pdg.udf' op a udf cannot read its own result}}
  %u = pdg.udf "f" [t] (%u[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}

// -----

// A udf has no cases to guard a read of an earlier point.
pdg.graph @udf_reads_before_domain {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{reads 'x'[t - 1], which is outside the domain of 'x' when t < 1}}
  %u = pdg.udf "f" [t] (%x[t - 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}
