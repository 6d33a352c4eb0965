// pdg-outline-bodies: each case body becomes a private func.func taking the
// case's inputs, then one index per domain dim (for pdg.point).
// RUN: pdg-opt %s --pdg-outline-bodies | FileCheck %s

// CHECK-LABEL: pdg.graph @g
// CHECK: %x = pdg.node "x" [b, t] -> tensor<f32> attributes {pdg.bodies = [@g_x_0, @g_x_1]}
// CHECK: func.func private @g_x_0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: index, %[[T:.*]]: index) -> tensor<f32> {
// CHECK-NEXT: return %[[A]] : tensor<f32>
// CHECK: func.func private @g_x_1(%[[P:.*]]: tensor<f32>, %{{.*}}: index, %[[T2:.*]]: index) -> tensor<f32> {
// CHECK: arith.index_cast %[[T2]] : index to i64
// CHECK: return
pdg.graph @g {
  pdg.dim @b < 2
  pdg.dim @t < 8
  %i = pdg.input "i" : !pdg.value<[b], tensor<f32>>
  %x = pdg.node "x" [b, t] -> tensor<f32>
    case (t == 0) (%a = %i[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      %t = pdg.point @t : index
      %ti = arith.index_cast %t : index to i64
      %tf = arith.sitofp %ti : i64 to f32
      %c = tensor.from_elements %tf : tensor<f32>
      %s = arith.addf %p, %c : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  pdg.output "x" %x : !pdg.value<[b, t], tensor<f32>>
}
