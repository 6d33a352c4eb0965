// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Invalid graph structure: ops outside a graph, several blocks, block arguments, nested graphs.

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
  // expected-error @+1 {{cannot appear directly in a pdg.graph, which holds only pdg.dim, pdg.input, pdg.node, pdg.udf, pdg.output and the collectives (pdg.all_reduce, pdg.all_gather, pdg.broadcast, pdg.reduce_scatter, pdg.shift)}}
  pdg.graph @inner {
    pdg.dim @s < 2
  }
}
