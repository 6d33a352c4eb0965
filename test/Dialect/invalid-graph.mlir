// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid graphs: duplicate names, bound symbols, undeclared dims, inputs, outputs, udfs, !pdg.value.

pdg.graph @duplicate_input {
  pdg.dim @t < 8
  // expected-note @+1 {{first input named 'a' is here}}
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  // expected-error @+1 {{'pdg.input' op input name 'a' is already used}}
  %b = pdg.input "a" : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @duplicate_output {
  %a = pdg.input "a" : !pdg.value<[], tensor<f32>>
  // expected-note @+1 {{first output named 'o' is here}}
  pdg.output "o" %a : !pdg.value<[], tensor<f32>>
  // expected-error @+1 {{'pdg.output' op output name 'o' is already used}}
  pdg.output "o" %a : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @bound_symbol_is_own_dim {
  // expected-error @+1 {{bound symbol 't' is also the name of a dim; use another name, e.g. 'T'}}
  pdg.dim @t < launch t
}

// -----

// The clash is found whatever the order of the two dims.
pdg.graph @bound_symbol_is_later_dim {
  // expected-error @+1 {{bound symbol 'len' is also the name of a dim; use another name, e.g. 'LEN'}}
  pdg.dim @b < launch len
  pdg.dim @len < 8
}

// -----

pdg.graph @duplicate_bound_symbol {
  // expected-note @+1 {{first bound here}}
  pdg.dim @b < launch N
  // expected-error @+1 {{bound symbol 'N' is already the bound of 'b'}}
  pdg.dim @c < launch N max 4
}

// -----

pdg.graph @duplicate_bound_symbol_dynamic {
  pdg.dim @b < launch T
  // expected-error @+1 {{bound symbol 'T' is already the bound of 'b'}}
  pdg.dim @t < dynamic T until %d : !pdg.value<[t], tensor<i1>>
  %d = pdg.input "d" : !pdg.value<[t], tensor<i1>>
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

// -----

pdg.graph @empty_input_name {
  // expected-error @+1 {{a program input needs a non-empty name}}
  %x = pdg.input "" : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @empty_output_name {
  %x = pdg.input "x" : !pdg.value<[], tensor<f32>>
  // expected-error @+1 {{a program output needs a non-empty name}}
  pdg.output "" %x : !pdg.value<[], tensor<f32>>
}

// -----

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

// -----

pdg.graph @value_dim_twice {
  pdg.dim @t < 8
  // expected-error @+1 {{dimension 't' appears twice in the domain}}
  %x = pdg.input "x" : !pdg.value<[t, t], tensor<f32>>
}

// -----

pdg.graph @value_point_not_tensor {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %x = pdg.input "x" : !pdg.value<[], f32>
}

// -----

pdg.graph @value_unranked_point {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %x = pdg.input "x" : !pdg.value<[], tensor<*xf32>>
}

// -----

// expected-note @+1 {{see existing symbol definition here}}
pdg.graph @same_name {
}
// expected-error @+1 {{redefinition of symbol named 'same_name'}}
pdg.graph @same_name {
}

// -----

// expected-error @+1 {{expected valid '@'-identifier for symbol name}}
pdg.graph {
}

// -----

// expected-error @+1 {{'pdg.input' op expects parent op 'pdg.graph'}}
%x = pdg.input "x" : !pdg.value<[], tensor<f32>>

// -----

pdg.graph @graph_regions_only_one_block {
  // expected-error @+1 {{'pdg.graph' op expects region #0 to have 0 or 1 blocks}}
  "pdg.graph"() <{sym_name = "inner"}> ({
  ^bb0:
    "pdg.dim"() <{kind = #pdg<bound static>, size = 1 : i64, sym_name = "i"}> : () -> ()
  ^bb1:
    "pdg.dim"() <{kind = #pdg<bound static>, size = 1 : i64, sym_name = "j"}> : () -> ()
  }) : () -> ()
}

// -----

// expected-error @+1 {{a graph's body takes no block arguments; program inputs are pdg.input ops}}
pdg.graph @block_arguments {
^bb0(%w: !pdg.value<[], tensor<f32>>):
  pdg.dim @t < 4
}

// -----

pdg.graph @outer {
  pdg.dim @t < 4
  // expected-error @+1 {{cannot appear directly in a pdg.graph, which holds only pdg.dim, pdg.input, pdg.node, pdg.udf and pdg.output ops}}
  pdg.graph @inner {
    pdg.dim @s < 2
  }
}
