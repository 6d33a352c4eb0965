// pdg-contract-reductions over the steps of a dynamic dim: a weight's
// gradient summed over the decode steps t becomes one product after the
// loop, over its inputs stored along t, even when they hold more numbers
// per step than the product (4 rows of 3 and of 2 against 3 x 2): each
// replayed step would otherwise run a small product and the sum add up T
// of them. over-steps=false keeps the per-step product (the unbatched
// program, to measure); a running sum, carried along t, is kept either way.
// RUN: pdg-opt %s --split-input-file --pdg-contract-reductions | FileCheck %s
// RUN: pdg-opt %s --split-input-file --pdg-contract-reductions=over-steps=false | FileCheck %s --check-prefix=UNBATCHED

!x = !pdg.value<[b, t], tensor<4x3xf32>>
!dy = !pdg.value<[b, t], tensor<4x2xf32>>
!p = !pdg.value<[b, t], tensor<3x2xf32>>
#rows_x = affine_map<(r, i, j) -> (r, i)>
#rows_dy = affine_map<(r, i, j) -> (r, j)>
#out = affine_map<(r, i, j) -> (i, j)>
#all3 = affine_map<(t, i, j) -> (t, i, j)>
#last2 = affine_map<(t, i, j) -> (i, j)>

// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: pdg.graph @gradient_over_steps
// CHECK-NOT: pdg.node "per_step"
// CHECK: %grad = pdg.node "grad" [b] (%[[A:.*]] = %x[b, 0 : T] : !pdg.value<[b, t], tensor<4x3xf32>>, %[[B:.*]] = %dy[b, 0 : T] : !pdg.value<[b, t], tensor<4x2xf32>>) -> tensor<3x2xf32> {
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[DY]], #[[OUT]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<?x4x3xf32>, tensor<?x4x2xf32>)
// UNBATCHED-LABEL: pdg.graph @gradient_over_steps
// UNBATCHED: pdg.node "per_step" [b, t]
// UNBATCHED: pdg.node "grad" [b] (%{{.*}} = %per_step[b, 0 : T]
pdg.graph @gradient_over_steps {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 8 until %done : !pdg.value<[b, t], tensor<i1>>
  %done = pdg.input "done" : !pdg.value<[b, t], tensor<i1>>
  %x = pdg.input "x" : !x
  %dy = pdg.input "dy" : !dy
  %per_step = pdg.node "per_step" [b, t] (%a = %x[b, t] : !x, %c = %dy[b, t] : !dy) -> tensor<3x2xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#rows_x, #rows_dy, #out], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a, %c : tensor<4x3xf32>, tensor<4x2xf32>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x2xf32>
    pdg.yield %g : tensor<3x2xf32>
  }
  %grad = pdg.node "grad" [b] (%a = %per_step[b, 0 : T] : !p) -> tensor<3x2xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#all3, #last2], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x3x2xf32>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x2xf32>
    pdg.yield %g : tensor<3x2xf32>
  }
  pdg.output "grad" %grad : !pdg.value<[b], tensor<3x2xf32>>
}

// -----

!x = !pdg.value<[b, t], tensor<4x3xf32>>
!dy = !pdg.value<[b, t], tensor<4x2xf32>>
!p = !pdg.value<[b, t], tensor<3x2xf32>>
#rows_x = affine_map<(r, i, j) -> (r, i)>
#rows_dy = affine_map<(r, i, j) -> (r, j)>
#out = affine_map<(r, i, j) -> (i, j)>
#all3 = affine_map<(t, i, j) -> (t, i, j)>
#last2 = affine_map<(t, i, j) -> (i, j)>

// A running sum over the steps so far (the sum is over t itself, reading
// 0 : t + 1): each step needs the sum of the steps before it, a dependence
// carried along t, so it cannot wait for all the steps. Kept.
// CHECK-LABEL: pdg.graph @running_sum
// CHECK: pdg.node "per_step" [b, t]
// CHECK: pdg.node "running" [b, t] (%{{.*}} = %per_step[b, 0 : t + 1]
pdg.graph @running_sum {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 8 until %done : !pdg.value<[b, t], tensor<i1>>
  %done = pdg.input "done" : !pdg.value<[b, t], tensor<i1>>
  %x = pdg.input "x" : !x
  %dy = pdg.input "dy" : !dy
  %per_step = pdg.node "per_step" [b, t] (%a = %x[b, t] : !x, %c = %dy[b, t] : !dy) -> tensor<3x2xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#rows_x, #rows_dy, #out], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a, %c : tensor<4x3xf32>, tensor<4x2xf32>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x2xf32>
    pdg.yield %g : tensor<3x2xf32>
  }
  %running = pdg.node "running" [b, t] (%a = %per_step[b, 0 : t + 1] : !p) -> tensor<3x2xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#all3, #last2], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x3x2xf32>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x2xf32>
    pdg.yield %g : tensor<3x2xf32>
  }
  pdg.output "running" %running : !pdg.value<[b, t], tensor<3x2xf32>>
}

// -----

!x = !pdg.value<[b, t], tensor<4x3xf32>>
!dy = !pdg.value<[b, t], tensor<4x2xf32>>
!p = !pdg.value<[b, t], tensor<3x2xf32>>
#rows_x = affine_map<(r, i, j) -> (r, i)>
#rows_dy = affine_map<(r, i, j) -> (r, j)>
#out = affine_map<(r, i, j) -> (i, j)>
#all3 = affine_map<(t, i, j) -> (t, i, j)>
#last2 = affine_map<(t, i, j) -> (i, j)>

// The same sum over a static t: not the replay of a dynamic dim's steps,
// so the inputs' size per point still decides (they hold more). Kept.
// CHECK-LABEL: pdg.graph @static_steps
// CHECK: pdg.node "per_step" [b, t]
// CHECK: pdg.node "grad" [b] (%{{.*}} = %per_step[b, 0 : 8]
pdg.graph @static_steps {
  pdg.dim @b < launch B
  pdg.dim @t < 8
  %x = pdg.input "x" : !x
  %dy = pdg.input "dy" : !dy
  %per_step = pdg.node "per_step" [b, t] (%a = %x[b, t] : !x, %c = %dy[b, t] : !dy) -> tensor<3x2xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#rows_x, #rows_dy, #out], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a, %c : tensor<4x3xf32>, tensor<4x2xf32>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x2xf32>
    pdg.yield %g : tensor<3x2xf32>
  }
  %grad = pdg.node "grad" [b] (%a = %per_step[b, 0 : 8] : !p) -> tensor<3x2xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x2xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
    %g = linalg.generic {indexing_maps = [#all3, #last2], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a : tensor<8x3x2xf32>) outs(%f : tensor<3x2xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x2xf32>
    pdg.yield %g : tensor<3x2xf32>
  }
  pdg.output "grad" %grad : !pdg.value<[b], tensor<3x2xf32>>
}
