// pdg-decompose-aggregates: linalg.softmax, which has no loop lowering,
// becomes linalg ops (max, subtract-exp, sum, divide) on tensors.
// RUN: pdg-opt %s --pdg-decompose-aggregates | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: math.exp
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
