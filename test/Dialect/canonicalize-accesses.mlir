// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization simplifies node and udf accesses and drops dominated max/min bounds.

// Access expressions are simplified, and of several max/min bounds that
// differ by a constant only the tightest is kept. (These slices stay of
// dynamic size; see canonicalize-slice-type.mlir for slices that become
// constant.)
// CHECK-LABEL: pdg.graph @simplify_node_accesses {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[max(0, t - 3) : min(t + 1, T)] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[t] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[t mod 4] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      %[[E:.*]] = tensor.extract_slice %arg0[0] [1] [1] : tensor<?xf32> to tensor<f32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E]], %arg1 : tensor<f32>
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[S]], %arg2 : tensor<f32>
// CHECK-NEXT:      pdg.yield %[[R]] : tensor<f32>
pdg.graph @simplify_node_accesses {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%w = %x[max(0, t - 3, t - 5) : min(t + 1, t + 4, T)] : !pdg.value<[t], tensor<f32>>, %p = %x[(t floordiv 2) * 2 + t mod 2] : !pdg.value<[t], tensor<f32>>, %m = %x[(t + 4) mod 4] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract_slice %w[%c0] [1] [1] : tensor<?xf32> to tensor<f32>
    %s = arith.addf %e, %p : tensor<f32>
    %r = arith.addf %s, %m : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// Udf accesses are simplified too: `max(t - 3, t - 5)` is `t - 3`,
// `min(t + 1, t + 4)` is `t + 1`, `max(0, 2)` is 2, `min(8, 10)` is 8.
// CHECK-LABEL: pdg.graph @simplify_udf_accesses {
// CHECK:         %f = pdg.udf "f" [t] (%x[t - 3 : t + 1] : !pdg.value<[t], tensor<f32>>, %x[2 : 8] : !pdg.value<[t], tensor<f32>>, %x[t] : !pdg.value<[t], tensor<f32>>, %x[max(0, t - 1) : min(t + 1, T)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
pdg.graph @simplify_udf_accesses {
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %f = pdg.udf "f" [t] (%x[max(t - 3, t - 5) : min(t + 1, t + 4)] : !pdg.value<[t], tensor<f32>>, %x[max(0, 2) : min(8, 10)] : !pdg.value<[t], tensor<f32>>, %x[(t floordiv 2) * 2 + t mod 2] : !pdg.value<[t], tensor<f32>>, %x[max(0, t - 1, t - 2) : min(t + 1, T, t + 3)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
}
