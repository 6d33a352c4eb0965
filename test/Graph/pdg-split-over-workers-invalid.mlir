// pdg-split-over-workers refuses, at the op, what it cannot split, and
// changes nothing.
// RUN: pdg-opt %s --split-input-file --verify-diagnostics --pdg-split-over-workers=dim=b

// expected-error @+1 {{pdg-split-over-workers: no dim 'b' in @no_b}}
pdg.graph @no_b {
  pdg.dim @t < launch T
}

// -----

pdg.graph @static_dim {
  // expected-error @+1 {{'b' is a static dim; only a launch dim}}
  pdg.dim @b < 4
}

// -----

pdg.graph @dynamic_dim {
  // expected-error @+1 {{'b' is a dynamic dim; only a launch dim}}
  pdg.dim @b < dynamic B max 8 until %d : !pdg.value<[b], tensor<i1>>
  %d = pdg.node "d" [b] -> tensor<i1> {
    %c = arith.constant dense<true> : tensor<i1>
    pdg.yield %c : tensor<i1>
  }
}

// -----

pdg.graph @has_worker {
  // expected-error @+1 {{the graph already has a worker dim 'r' (one per program)}}
  pdg.dim @r < world R
  pdg.dim @b < launch B
}

// -----

pdg.graph @name_taken {
  pdg.dim @b < launch B
  // expected-error @+1 {{a dim 'w' exists already: choose another worker=NAME}}
  pdg.dim @w < launch K
}

// -----

pdg.graph @previous_point {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{reads [0], another point of 'b' than its own, which may be on another rank}}
  %y = pdg.node "y" [b] (%a = %x[0] : !pdg.value<[b], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @condition_on_b {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{a case condition reads 'b' or 'B'}}
  %y = pdg.node "y" [b] -> tensor<f32>
    case (b == 0) (%a = %x[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    default (%a = %x[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[b], tensor<f32>>
}

// -----

pdg.graph @part_of_b {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{reads [0 : 2], part of 'b'; only all of it (0 : B) can be read from outside 'b'}}
  %y = pdg.node "y" [] (%a = %x[0 : 2] : !pdg.value<[b], tensor<f32>>) -> tensor<2xf32> {
    pdg.yield %a : tensor<2xf32>
  }
  pdg.output "y" %y : !pdg.value<[], tensor<2xf32>>
}

// -----

pdg.graph @last_point {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{reads [B - 1], part of 'b'}}
  %y = pdg.node "y" [] (%a = %x[B - 1] : !pdg.value<[b], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[], tensor<f32>>
}

// -----

// A mean divides by the extent it reads, a rank's share once split.
pdg.graph @mean {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{reads all of 'b' and does more than add it up}}
  %m = pdg.node "m" [] (%arg0 = %x[0 : B] : !pdg.value<[b], tensor<f32>>) -> tensor<f32> {
    %0 = tensor.empty() : tensor<f32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<f32>) -> tensor<f32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%arg0 : tensor<?xf32>) outs(%1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<f32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %arg0, %c0 : tensor<?xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %nt = tensor.from_elements %nf : tensor<f32>
    %4 = linalg.div ins(%2, %nt : tensor<f32>, tensor<f32>) outs(%0 : tensor<f32>) -> tensor<f32>
    pdg.yield %4 : tensor<f32>
  }
  pdg.output "m" %m : !pdg.value<[], tensor<f32>>
}

// -----

// The largest element of b: not a sum.
pdg.graph @max_over_b {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{reads all of 'b' and does more than add it up}}
  %m = pdg.node "m" [] (%arg0 = %x[0 : B] : !pdg.value<[b], tensor<f32>>) -> tensor<f32> {
    %0 = tensor.empty() : tensor<f32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<f32>) -> tensor<f32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%arg0 : tensor<?xf32>) outs(%1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.maximumf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<f32>
    pdg.yield %2 : tensor<f32>
  }
  pdg.output "m" %m : !pdg.value<[], tensor<f32>>
}

// -----

pdg.graph @udf_reads_all {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  // expected-error @+1 {{a host callback reads all of 'b', which is split over the ranks}}
  %r = pdg.udf "score" [] (%x[0 : B] : !pdg.value<[b], tensor<f32>>) -> tensor<f32>
  pdg.output "r" %r : !pdg.value<[], tensor<f32>>
}

// -----

// The extent alone, reaching an output not over b: it would differ
// between ranks.
pdg.graph @per_rank_output {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  %rows = pdg.node "rows" [] (%shape = %x[0 : B] : !pdg.value<[b], tensor<f32>>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %shape, %c0 : tensor<?xf32>
    %e = tensor.empty(%n) : tensor<?xf32>
    pdg.yield %e : tensor<?xf32>
  }
  // expected-error @+1 {{is an output computed from each rank's own points of 'b' other than through a sum over them}}
  pdg.output "rows" %rows : !pdg.value<[], tensor<?xf32>>
}
