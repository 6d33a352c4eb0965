// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// Round trip of a node body written with linalg on tensors of dynamic shape.

// A realistic body: linalg on tensors with dynamic shapes from a slice.
// CHECK-LABEL: pdg.graph @linalg_body {
// CHECK:         %mean = pdg.node "mean" [t] (%arg0 = %x[0 : t + 1] : !pdg.value<[t], tensor<16xf32>>) -> tensor<16xf32> {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[E:.*]] = tensor.empty() : tensor<16xf32>
// CHECK-NEXT:      %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<16xf32>) -> tensor<16xf32>
// CHECK-NEXT:      %[[R:.*]] = linalg.reduce ins(%arg0 : tensor<?x16xf32>) outs(%[[F]] : tensor<16xf32>) dimensions = [0]
// CHECK:           pdg.yield %[[R]] : tensor<16xf32>
// CHECK-NEXT:    }
pdg.graph @linalg_body {
  pdg.dim @t < 128
  %x = pdg.input "x" : !pdg.value<[t], tensor<16xf32>>
  %m = pdg.node "mean" [t] (%w = %x[0 : t + 1] : !pdg.value<[t], tensor<16xf32>>) -> tensor<16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %r = linalg.reduce ins(%w : tensor<?x16xf32>) outs(%f : tensor<16xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    pdg.yield %r : tensor<16xf32>
  }
  pdg.output "mean" %m : !pdg.value<[t], tensor<16xf32>>
}
