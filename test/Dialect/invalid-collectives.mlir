// RUN: pdg-opt %s --split-input-file --verify-diagnostics
// Collectives and worker dims the verifier refuses.

pdg.graph @over_unknown_dim {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{communicates over unknown dim 'v'; declare a worker dim, e.g. `pdg.dim @v < world W`}}
  %s = pdg.all_reduce sum %x over @v : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @over_launch_dim {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{communicates over 'b', which is not a worker dim; collectives combine the ranks' points of a dim declared `pdg.dim @b < world W`}}
  %s = pdg.all_reduce sum %x over @b : !pdg.value<[b], tensor<f32>> -> !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @input_not_over_worker {
  pdg.dim @w < world W
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{input 'x' is defined over [b], not over 'w'; a collective combines the ranks' points of a value over the worker dim}}
  %s = pdg.all_reduce sum %x over @w : !pdg.value<[b], tensor<f32>> -> !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @result_keeps_worker {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{result is defined over 'w', the dim it communicates over; the result is the same on every rank, so its domain is the input's without 'w'}}
  %s = pdg.all_reduce sum %x over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[w], tensor<f32>>
}

// -----

pdg.graph @result_other_domain {
  pdg.dim @w < world W
  pdg.dim @b < 4
  pdg.dim @c < 4
  %x = pdg.input "x" : !pdg.value<[w, b], tensor<f32>>
  // expected-error @+1 {{result is defined over [c], but the input's domain without 'w' is [b]}}
  %s = pdg.all_reduce max %x over @w : !pdg.value<[w, b], tensor<f32>> -> !pdg.value<[c], tensor<f32>>
}

// -----

pdg.graph @reduce_changes_type {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<4xf32>>
  // expected-error @+1 {{reduces points of type 'tensor<4xf32>' into points of type 'tensor<4xf64>'; an all-reduce keeps the point type}}
  %s = pdg.all_reduce sum %x over @w : !pdg.value<[w], tensor<4xf32>> -> !pdg.value<[], tensor<4xf64>>
}

// -----

pdg.graph @reduce_booleans {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<i1>>
  // expected-error @+1 {{cannot sum elements of type 'i1'; an all-reduce takes floats or integers}}
  %s = pdg.all_reduce sum %x over @w : !pdg.value<[w], tensor<i1>> -> !pdg.value<[], tensor<i1>>
}

// -----

pdg.graph @unknown_reduction {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+2 {{expected ::mlir::pdg::Reduction to be one of: sum, max}}
  // expected-error @+1 {{failed to parse Pdg_ReductionAttr parameter 'value' which is to be a `::mlir::pdg::Reduction`}}
  %s = pdg.all_reduce mean %x over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @gather_without_rank_dim {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<4xf32>>
  // expected-error @+1 {{gathers points of type 'tensor<4xf32>' into points of type 'tensor<4xf32>', expected 'tensor<?x4xf32>' (a leading dim, one row per rank)}}
  %s = pdg.all_gather %x over @w : !pdg.value<[w], tensor<4xf32>> -> !pdg.value<[], tensor<4xf32>>
}

// -----

pdg.graph @broadcast_negative_root {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{root rank -1 is negative; ranks are 0, 1, ..., W - 1}}
  %s = pdg.broadcast %x from -1 over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @broadcast_root_past_max {
  pdg.dim @w < world W max 4
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{root rank 4 is past the 4 ranks that dim 'w' allows (its max)}}
  %s = pdg.broadcast %x from 4 over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @broadcast_changes_type {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{broadcasts points of type 'tensor<f32>' as points of type 'tensor<i32>'; a broadcast keeps the point type}}
  %s = pdg.broadcast %x from 0 over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<i32>>
}

// -----

// Another rank's point is reached through a collective, never an access.
pdg.graph @read_other_rank {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{access 'x'[w - 1] reads worker dim 'w' at another point than its own: each rank holds only its own point of a value over 'w'; read it at 'w' from a consumer over 'w', combine the ranks' points with pdg.all_reduce, pdg.all_gather, pdg.broadcast or pdg.reduce_scatter, or move them between ranks with pdg.shift}}
  %y = pdg.node "y" [w] -> tensor<f32>
    case (w >= 1) (%a = %x[w - 1] : !pdg.value<[w], tensor<f32>>) { pdg.yield %a : tensor<f32> }
    default { %c = arith.constant dense<0.0> : tensor<f32>
              pdg.yield %c : tensor<f32> }
}

// -----

pdg.graph @sum_over_ranks_in_a_node {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{access 'x'[0 : W] reads worker dim 'w' at another point than its own}}
  %y = pdg.node "y" [] (%a = %x[0 : W] : !pdg.value<[w], tensor<f32>>) -> tensor<?xf32> {
    pdg.yield %a : tensor<?xf32>
  }
}

// -----

pdg.graph @udf_reads_fixed_rank {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{access 'x'[0] reads worker dim 'w' at another point than its own}}
  %y = pdg.udf "f" [] (%x[0] : !pdg.value<[w], tensor<f32>>) -> tensor<f32>
}

// -----

// A worker dim is bound at launch by the number of ranks.
pdg.graph @static_worker {
  // expected-error @+1 {{worker dim 'w' is bound by the number of ranks, given at launch: declare it `pdg.dim @w < world W`}}
  "pdg.dim"() <{kind = #pdg<bound static>, size = 4 : i64, sym_name = "w", worker}> : () -> ()
}

// -----

pdg.graph @world_keyword_typo {
  // expected-error @+1 {{expected a static bound (an integer), 'launch', 'world' or 'dynamic', got 'worlds'}}
  pdg.dim @w < worlds W
}

// -----

// A collective belongs to a graph.
func.func @outside(%x: !pdg.value<[w], tensor<f32>>) {
  // expected-error @+1 {{'pdg.all_reduce' op expects parent op 'pdg.graph'}}
  %s = pdg.all_reduce sum %x over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<f32>>
  return
}

// -----

pdg.graph @reduce_scatter_over_launch_dim {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<4xf32>>
  // expected-error @+1 {{communicates over 'b', which is not a worker dim; collectives combine the ranks' points of a dim declared `pdg.dim @b < world W`}}
  %s = pdg.reduce_scatter sum %x over @b : !pdg.value<[b], tensor<4xf32>> -> !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @reduce_scatter_input_not_over_worker {
  pdg.dim @w < world W
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[b], tensor<2xf32>>
  // expected-error @+1 {{input 'x' is defined over [b], not over 'w'; a collective combines the ranks' points of a value over the worker dim}}
  %s = pdg.reduce_scatter sum %x over @w : !pdg.value<[b], tensor<2xf32>> -> !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @reduce_scatter_drops_worker {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<2xf32>>
  // expected-error @+1 {{result is defined over [], but each rank gets a point of its own, so the result keeps the input's domain [w]}}
  %s = pdg.reduce_scatter sum %x over @w : !pdg.value<[w], tensor<2xf32>> -> !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @reduce_scatter_scalar_points {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{input points of type 'tensor<f32>' have no leading dim to scatter; give them a leading dim of W blocks, one per rank}}
  %s = pdg.reduce_scatter sum %x over @w : !pdg.value<[w], tensor<f32>> -> !pdg.value<[w], tensor<f32>>
}

// -----

pdg.graph @reduce_scatter_keeps_the_leading_dim {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<2x4xf32>>
  // expected-error @+1 {{scatters points of type 'tensor<2x4xf32>' into points of type 'tensor<2x4xf32>', expected 'tensor<4xf32>' (one block of the leading dim)}}
  %s = pdg.reduce_scatter sum %x over @w : !pdg.value<[w], tensor<2x4xf32>> -> !pdg.value<[w], tensor<2x4xf32>>
}

// -----

pdg.graph @reduce_scatter_more_blocks_than_ranks {
  pdg.dim @w < world W max 2
  %x = pdg.input "x" : !pdg.value<[w], tensor<3x4xf32>>
  // expected-error @+1 {{input points have 3 blocks, more than the 2 ranks that dim 'w' allows (its max)}}
  %s = pdg.reduce_scatter sum %x over @w : !pdg.value<[w], tensor<3x4xf32>> -> !pdg.value<[w], tensor<4xf32>>
}

// -----

pdg.graph @reduce_scatter_booleans {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<2xi1>>
  // expected-error @+1 {{cannot max elements of type 'i1'; a reduce-scatter takes floats or integers}}
  %s = pdg.reduce_scatter max %x over @w : !pdg.value<[w], tensor<2xi1>> -> !pdg.value<[w], tensor<i1>>
}

// -----

pdg.graph @shift_over_unknown_dim {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  // expected-error @+1 {{communicates over unknown dim 'v'; declare a worker dim, e.g. `pdg.dim @v < world W`}}
  %s = pdg.shift %x by 1 over @v : !pdg.value<[w], tensor<f32>> -> !pdg.value<[w], tensor<f32>>
}

// -----

pdg.graph @shift_over_static_dim {
  pdg.dim @m < 4
  %x = pdg.input "x" : !pdg.value<[m], tensor<f32>>
  // expected-error @+1 {{communicates over 'm', which is not a worker dim; collectives combine the ranks' points of a dim declared `pdg.dim @m < world W`}}
  %s = pdg.shift %x by 1 over @m : !pdg.value<[m], tensor<f32>> -> !pdg.value<[m], tensor<f32>>
}

// -----

pdg.graph @shift_other_domain {
  pdg.dim @w < world W
  pdg.dim @b < 4
  %x = pdg.input "x" : !pdg.value<[w, b], tensor<f32>>
  // expected-error @+1 {{result is defined over [b, w], but each rank gets a point of its own, so the result keeps the input's domain [w, b]}}
  %s = pdg.shift %x by 1 over @w : !pdg.value<[w, b], tensor<f32>> -> !pdg.value<[b, w], tensor<f32>>
}

// -----

pdg.graph @shift_changes_type {
  pdg.dim @w < world W
  %x = pdg.input "x" : !pdg.value<[w], tensor<4xf32>>
  // expected-error @+1 {{shifts points of type 'tensor<4xf32>' as points of type 'tensor<4xi32>'; a shift keeps the point type}}
  %s = pdg.shift %x by 1 over @w : !pdg.value<[w], tensor<4xf32>> -> !pdg.value<[w], tensor<4xi32>>
}
