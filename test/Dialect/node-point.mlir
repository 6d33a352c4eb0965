// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of pdg.point, directly in a node body and nested in a region.

// pdg.point gives the coordinate of the current point along a dim of the
// node's domain, e.g. for a position-dependent mask.
// CHECK-LABEL: pdg.graph @point {
// CHECK-NEXT:    pdg.dim @b < 2
// CHECK-NEXT:    pdg.dim @t < 64
// CHECK-NEXT:    %pos = pdg.node "pos" [b, t] -> tensor<i64> {
// CHECK-NEXT:      %[[T:.*]] = pdg.point @t : index
// CHECK-NEXT:      %[[B:.*]] = pdg.point @b {pdg.why = "batch"} : index
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[T]], %[[B]] : index
// CHECK-NEXT:      %[[I:.*]] = arith.index_cast %[[S]] : index to i64
// CHECK-NEXT:      %[[R:.*]] = tensor.from_elements %[[I]] : tensor<i64>
// CHECK-NEXT:      pdg.yield %[[R]] : tensor<i64>
// CHECK-NEXT:    }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "point"}> ({
// GENERIC:         %{{.*}} = "pdg.point"() <{dim = @t}> : () -> index
// GENERIC-NEXT:    %{{.*}} = "pdg.point"() <{dim = @b}> {pdg.why = "batch"} : () -> index
pdg.graph @point {
  pdg.dim @b < 2
  pdg.dim @t < 64
  %pos = pdg.node "pos" [b, t] -> tensor<i64> {
    %t = pdg.point @t : index
    %b = pdg.point @b {pdg.why = "batch"} : index
    %s = arith.addi %t, %b : index
    %i = arith.index_cast %s : index to i64
    %r = tensor.from_elements %i : tensor<i64>
    pdg.yield %r : tensor<i64>
  }
  pdg.output "pos" %pos : !pdg.value<[b, t], tensor<i64>>
}

// pdg.point may sit in a region nested inside the node's body.
// CHECK-LABEL: pdg.graph @point_nested {
// CHECK:           linalg.generic
// CHECK:             pdg.point @t : index
pdg.graph @point_nested {
  pdg.dim @t < 8
  %r = pdg.node "ramp" [t] -> tensor<4xindex> {
    %init = tensor.empty() : tensor<4xindex>
    %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%init : tensor<4xindex>) {
    ^bb0(%out: index):
      %t = pdg.point @t : index
      %i = linalg.index 0 : index
      %s = arith.addi %t, %i : index
      linalg.yield %s : index
    } -> tensor<4xindex>
    pdg.yield %g : tensor<4xindex>
  }
  pdg.output "ramp" %r : !pdg.value<[t], tensor<4xindex>>
}
