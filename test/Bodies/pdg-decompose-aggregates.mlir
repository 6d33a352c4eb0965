// pdg-decompose-aggregates: linalg.softmax, which has no loop lowering,
// becomes linalg ops (max, subtract-exp, sum, divide) on tensors; exp's
// argument is clamped at -87 (f32), where exp would underflow.
// RUN: pdg-opt %s --pdg-decompose-aggregates | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// The exponent (x - max <= 0) is clamped where exp would underflow.
// CHECK: %[[D:.*]] = arith.subf
// CHECK: %[[L:.*]] = arith.constant -8.700000e+01 : f32
// CHECK: %[[C:.*]] = arith.maximumf %[[D]], %[[L]] : f32
// CHECK: math.exp %[[C]]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: return
func.func @softmax(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<2x?xf32>
  %e = tensor.empty(%n) : tensor<2x?xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x?xf32>) outs(%e : tensor<2x?xf32>) -> tensor<2x?xf32>
  return %s : tensor<2x?xf32>
}
