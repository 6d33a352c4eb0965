// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of slice accesses: static and dynamic extents, several slice dims, max/min bounds.

// Slices add a leading dimension to the body argument: dynamic when the
// extent is symbolic, static when it is constant (`t - 3 : t + 1` reads 4
// points, `0 : 8` reads 8).
// CHECK-LABEL: pdg.graph @slices {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[0 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %arg1 = %x[t - 3 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %arg2 = %x[0 : 8] : !pdg.value<[t], tensor<16xf32>>, %arg3 = %x[t + 1 : t + 2] : !pdg.value<[t], tensor<16xf32>>) -> tensor<4x16xf32> {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = tensor.dim %arg0, %[[C0]] : tensor<?x16xf32>
// CHECK-NEXT:      %{{.*}} = tensor.extract_slice %arg2[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
// CHECK-NEXT:      pdg.yield %arg1 : tensor<4x16xf32>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "slices"}> ({
// GENERIC:           ^bb0(%{{.*}}: tensor<?x16xf32>, %{{.*}}: tensor<4x16xf32>, %{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<1x16xf32>):
pdg.graph @slices {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<16xf32>>
  %y = pdg.node "y" [t] (%pre = %x[0 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %win = %x[t - 3 : t + 1] : !pdg.value<[t], tensor<16xf32>>, %head = %x[0 : 8] : !pdg.value<[t], tensor<16xf32>>, %one = %x[t + 1 : t + 2] : !pdg.value<[t], tensor<16xf32>>) -> tensor<4x16xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %pre, %c0 : tensor<?x16xf32>
    %s = tensor.extract_slice %head[0, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    pdg.yield %win : tensor<4x16xf32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<4x16xf32>>
}

// Slices over several dims, a slice next to a point, and a point type of
// rank 2: the slice dims come first, in producer dim order.
// CHECK-LABEL: pdg.graph @multi_slice {
// CHECK:         %y = pdg.node "y" [h] (%arg0 = %kv[0 : 2, h, 0 : 3] : !pdg.value<[b, h, t], tensor<4x8xbf16>>) -> tensor<2x3x4x8xbf16> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<2x3x4x8xbf16>
pdg.graph @multi_slice {
  pdg.dim @b < 2
  pdg.dim @h < 4
  pdg.dim @t < 3
  %kv = pdg.input "kv" : !pdg.value<[b, h, t], tensor<4x8xbf16>>
  %y = pdg.node "y" [h] (%a = %kv[0 : 2, h, 0 : 3] : !pdg.value<[b, h, t], tensor<4x8xbf16>>) -> tensor<2x3x4x8xbf16> {
    pdg.yield %a : tensor<2x3x4x8xbf16>
  }
  pdg.output "y" %y : !pdg.value<[h], tensor<2x3x4x8xbf16>>
}

// Slices with several bounds: `max(...)` lower bounds, `min(...)` upper
// bounds; the extent is then dynamic even when each pair is constant.
// CHECK-LABEL: pdg.graph @max_min_bounds {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[max(0, t - 63) : t + 1] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[t : min(t + 16, 512)] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[max(0, t - 3, t - 5) : min(t + 1, t + 4)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "max_min_bounds"}> ({
// GENERIC:         accesses = [#pdg.access<(d0) : [max(0, d0 - 63) : d0 + 1]>, #pdg.access<(d0) : [d0 : min(d0 + 16, 512)]>, #pdg.access<(d0) : [max(0, d0 - 3, d0 - 5) : min(d0 + 1, d0 + 4)]>]
// GENERIC:         ^bb0(%{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>):
pdg.graph @max_min_bounds {
  pdg.dim @t < 512
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%w = %x[max(0, t - 63) : t + 1] : !pdg.value<[t], tensor<f32>>, %n = %x[t : min(t + 16, 512)] : !pdg.value<[t], tensor<f32>>, %z = %x[max(0, t - 3, t - 5) : min(t + 1, t + 4)] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
