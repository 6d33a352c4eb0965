// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// Round trip of pdg.udf with attributes, reading fixed points and windows of a node, read back by a node.

// A udf with discardable attributes (no `attributes` keyword), reading an
// fixed point of a node and a window of the same node; a node may read
// the udf back at the same point.
// CHECK-LABEL: pdg.graph @udf_attrs_and_reads {
// CHECK-NEXT:    pdg.dim @t < 16
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    %sq = pdg.node "sq" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %arg0, %arg0 : tensor<f32>
// CHECK-NEXT:      pdg.yield %[[M]] : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %log = pdg.udf "log" [t] (%sq[0] : !pdg.value<[t], tensor<f32>>, %sq[max(0, t - 3) : t + 1] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {pdg.effects = "stdout", pdg.rate = 4 : i64}
// CHECK-NEXT:    %use = pdg.node "use" [t] (%arg0 = %log[t] : !pdg.value<[t], tensor<i1>>) -> tensor<i1> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<i1>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pdg.graph @udf_attrs_and_reads {
  pdg.dim @t < 16
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %sq = pdg.node "sq" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %m = arith.mulf %v, %v : tensor<f32>
    pdg.yield %m : tensor<f32>
  }
  %log = pdg.udf "log" [t] (%sq[0] : !pdg.value<[t], tensor<f32>>, %sq[max(0, t - 3) : t + 1] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {pdg.rate = 4, pdg.effects = "stdout"}
  %use = pdg.node "use" [t] (%v = %log[t] : !pdg.value<[t], tensor<i1>>) -> tensor<i1> {
    pdg.yield %v : tensor<i1>
  }
}
