// pdg-reassociate-reductions: the arithmetic of reduction bodies may be
// reordered (reassoc) and fused (contract); elementwise bodies are left alone.
// RUN: pdg-opt %s --pdg-reassociate-reductions | FileCheck %s

// CHECK-LABEL: func.func @dot
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
func.func @dot(%a: tensor<64xf32>, %b: tensor<64xf32>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>, affine_map<(d) -> ()>], iterator_types = ["reduction"]} ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%o : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @scale
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fastmath
func.func @scale(%a: tensor<64xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>], iterator_types = ["parallel"]} ins(%a : tensor<64xf32>) outs(%o : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// Conversions carry flags optionally and lose them in LLVM: left alone
// (regression: their absent attribute crashed the pass).
// CHECK-LABEL: func.func @narrow_sum
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
func.func @narrow_sum(%a: tensor<8xf64>, %o: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> ()>], iterator_types = ["reduction"]} ins(%a : tensor<8xf64>) outs(%o : tensor<f32>) {
  ^bb0(%x: f64, %acc: f32):
    %n = arith.truncf %x : f64 to f32
    %s = arith.addf %n, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
