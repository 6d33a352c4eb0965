// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of point accesses: the same, an earlier and a fixed point; empty accesses `[]` and empty domains.

// Points: the same point, an earlier point (guarded), a fixed point.
// CHECK-LABEL: pdg.graph @points {
// CHECK:         %y = pdg.node "y" [b, t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) (%arg0 = %x[b, t] : !pdg.value<[b, t], tensor<f32>>, %arg1 = %x[0, 3] : !pdg.value<[b, t], tensor<f32>>) {
// CHECK:           case (t >= 1) (%arg0 = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "points"}> ({
// GENERIC:         accesses = [#pdg.access<(d0, d1) : [d0, d1]>, #pdg.access<(d0, d1) : [0, 3]>, #pdg.access<(d0, d1) : [d0, d1 - 1]>]
pdg.graph @points {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t == 0) (%a = %x[b, t] : !pdg.value<[b, t], tensor<f32>>, %c = %x[0, 3] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[b, t], tensor<f32>>
}

// Empty accesses `[]` read a value with an empty domain; a node with an empty
// domain reads fixed points or whole slices.
// CHECK-LABEL: pdg.graph @empty_domains {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
// CHECK:         %z = pdg.node "z" [] (%arg0 = %y[2] : !pdg.value<[t], tensor<4x4xf32>>, %arg1 = %y[0 : 8] : !pdg.value<[t], tensor<4x4xf32>>, %arg2 = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "empty_domains"}> ({
// GENERIC:         accesses = [#pdg.access<(d0) : []>]
// GENERIC:         accesses = [#pdg.access<() : [2]>, #pdg.access<() : [0 : 8]>, #pdg.access<() : []>]
// GENERIC:         ^bb0(%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<8x4x4xf32>, %{{.*}}: tensor<4x4xf32>):
pdg.graph @empty_domains {
  pdg.dim @t < 8
  %w = pdg.input "w" : !pdg.value<[], tensor<4x4xf32>>
  %y = pdg.node "y" [t] (%a = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
    pdg.yield %a : tensor<4x4xf32>
  }
  %z = pdg.node "z" [] (%p = %y[2] : !pdg.value<[t], tensor<4x4xf32>>, %all = %y[0 : 8] : !pdg.value<[t], tensor<4x4xf32>>, %w2 = %w[] : !pdg.value<[], tensor<4x4xf32>>) -> tensor<4x4xf32> {
    pdg.yield %p : tensor<4x4xf32>
  }
  pdg.output "z" %z : !pdg.value<[], tensor<4x4xf32>>
}
