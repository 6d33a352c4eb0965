// RUN: pdg-opt %s --canonicalize | FileCheck %s
// Canonicalizing a slice whose extent becomes constant must keep the node valid (known bug).
//
// BUG: SimplifyNodeAccesses drops the dominated bounds of
// `max(t - 3, t - 5) : min(t + 1, t + 4)`, giving `t - 3 : t + 1`, whose body
// argument type is tensor<4xf32>; the pattern only rewrites the `accesses`
// attribute, so the block argument keeps tensor<?xf32> and the result fails
// to verify: "body argument #0 of case #0 has type 'tensor<?xf32>', but access
// 'x'[t - 3 : t + 1] gives 'tensor<4xf32>'". The same happens for

// CHECK-LABEL: pdg.graph @slice_becomes_constant {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t - 3 : t + 1] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[2 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @slice_becomes_constant {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%w = %x[max(t - 3, t - 5) : min(t + 1, t + 4)] : !pdg.value<[t], tensor<f32>>, %h = %x[max(0, 2) : min(8, 10)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %e = tensor.extract_slice %w[0] [1] [1] : tensor<?xf32> to tensor<f32>
    %f = tensor.extract_slice %h[0] [1] [1] : tensor<?xf32> to tensor<f32>
    %s = arith.addf %e, %f : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
