// pdg-interchange-reductions: a reduction moves outside the output's
// contiguous dim when every input reading that dim has it last.
// RUN: pdg-opt %s --pdg-interchange-reductions | FileCheck %s

// y[n] = sum_k x[k] * W[k, n]: k outside, n inside.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @matvec
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["reduction", "parallel"]}
func.func @matvec(%x: tensor<4xf32>, %w: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<4xf32>, tensor<4x8xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// scores[h, s] = sum_d q[h, d] * k[s, h, d]: s is not last in k (strided),
// so the dot product over d stays innermost.
// CHECK-LABEL: func.func @scores
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @scores(%q: tensor<2x16xf32>, %k: tensor<8x2x16xf32>, %o: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(h, s, d) -> (h, d)>, affine_map<(h, s, d) -> (s, h, d)>, affine_map<(h, s, d) -> (h, s)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x16xf32>, tensor<8x2x16xf32>) outs(%o : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// A full reduction to a scalar has no output dim to move: unchanged.
// CHECK-LABEL: func.func @total
// CHECK: iterator_types = ["reduction"]
func.func @total(%x: tensor<8xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%o : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// On buffers (no results; the pass read the output's map from the result
// and aborted, found by the fuzzer): the same choices, from the init.
// CHECK-LABEL: func.func @matvec_buffers
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : memref<8xf32>)
func.func @matvec_buffers(%x: memref<4xf32>, %w: memref<4x8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : memref<4xf32>, memref<4x8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @total_buffers
// CHECK: iterator_types = ["reduction"]
// CHECK-SAME: outs(%{{.*}} : memref<f32>)
func.func @total_buffers(%x: memref<8xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<8xf32>) outs(%o : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
