// pdg-fuse-elementwise: a chain of all-parallel generics becomes one;
// contractions, producers with other users and reductions stay apart.
// RUN: pdg-opt %s --pdg-fuse-elementwise | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// w - lr * m / (sqrt(v) + eps): four generics, one after fusion, whose
// body does the four ops in order.
// CHECK-LABEL: func.func @update
// CHECK: linalg.generic
// CHECK: math.sqrt
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.divf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
// CHECK-NOT: linalg.generic
func.func @update(%w: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> tensor<64xf32> {
  %eps = arith.constant 1.0e-8 : f32
  %lr = arith.constant 0.01 : f32
  %e = tensor.empty() : tensor<64xf32>
  %root = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sqrt %a : f32
    %t = arith.addf %s, %eps : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %ratio = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%m, %root : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  %step = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%ratio : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %lr : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%w, %step : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.subf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  return %new : tensor<64xf32>
}

// A scaling feeding a matrix-vector product stays a generic of its own
// (the product keeps its form), and so does a value with another user
// (here the function's result).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.generic
func.func @kept(%x: tensor<64xf32>, %w: tensor<64x16xf32>, %acc: tensor<16xf32>) -> (tensor<16xf32>, tensor<64xf32>, tensor<64xf32>) {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %two : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]} ins(%scaled, %w : tensor<64xf32>, tensor<64x16xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %shared = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %two : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%shared, %shared : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.mulf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<64xf32>
  return %y, %sum, %shared : tensor<16xf32>, tensor<64xf32>, tensor<64xf32>
}
