// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of the short (single-case) form of pdg.node and of pdg.yield.

// In the generic form, the condition of a short-form node is an always-true
// affine set over the node's dims.
// GENERIC-DAG: #set{{[0-9]*}} = affine_set<(d0) : (0 >= 0)>
// GENERIC-DAG: #set{{[0-9]*}} = affine_set<() : (0 >= 0)>
// GENERIC-DAG: #set{{[0-9]*}} = affine_set<(d0, d1) : (0 >= 0)>

// A node without inputs: the body computes a constant at every point.
// CHECK-LABEL: pdg.graph @no_inputs {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %zeros = pdg.node "zeros" [t] -> tensor<4xf32> {
// CHECK-NEXT:      %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT:      pdg.yield %[[C]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    pdg.output "zeros" %zeros : !pdg.value<[t], tensor<4xf32>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "no_inputs"}> ({
// GENERIC:         "pdg.node"() <{accesses = [], conditions = [#set{{[0-9]*}}], name = "zeros", symbols = []}> ({
// GENERIC-NEXT:      %{{.*}} = "arith.constant"() <{value = dense<0.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>
// GENERIC-NEXT:      "pdg.yield"(%{{.*}}) : (tensor<4xf32>) -> ()
// GENERIC-NEXT:    }) : () -> !pdg.value<[t], tensor<4xf32>>
pdg.graph @no_inputs {
  pdg.dim @t < 8
  %z = pdg.node "zeros" [t] -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    pdg.yield %c : tensor<4xf32>
  }
  pdg.output "zeros" %z : !pdg.value<[t], tensor<4xf32>>
}

// An unnamed node over an empty domain (a single point); its result gets a
// numbered SSA name.
// CHECK-LABEL: pdg.graph @unnamed_scalar {
// CHECK-NEXT:    %[[N:.*]] = pdg.node [] -> tensor<i64> {
// CHECK-NEXT:      %[[C:.*]] = arith.constant dense<7> : tensor<i64>
// CHECK-NEXT:      pdg.yield %[[C]] : tensor<i64>
// CHECK-NEXT:    }
// CHECK-NEXT:    pdg.output "seven" %[[N]] : !pdg.value<[], tensor<i64>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "unnamed_scalar"}> ({
// GENERIC-NEXT:    "pdg.node"() <{accesses = [], conditions = [#set{{[0-9]*}}], symbols = []}> ({
pdg.graph @unnamed_scalar {
  %n = pdg.node [] -> tensor<i64> {
    %c = arith.constant dense<7> : tensor<i64>
    pdg.yield %c : tensor<i64>
  }
  pdg.output "seven" %n : !pdg.value<[], tensor<i64>>
}

// Block arguments are printed as %argN after `=`; the producer's type follows
// each access. A body may yield one of its arguments directly.
// CHECK-LABEL: pdg.graph @pointwise {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    pdg.dim @t < 16
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[b, t], tensor<8xf32>>
// CHECK-NEXT:    %bias = pdg.input "bias" : !pdg.value<[], tensor<8xf32>>
// CHECK-NEXT:    %y = pdg.node "y" [b, t] (%arg0 = %x[b, t] : !pdg.value<[b, t], tensor<8xf32>>, %arg1 = %bias[] : !pdg.value<[], tensor<8xf32>>) -> tensor<8xf32> {
// CHECK-NEXT:      %[[S:.*]] = arith.addf %arg0, %arg1 : tensor<8xf32>
// CHECK-NEXT:      pdg.yield %[[S]] : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %copy = pdg.node "copy" [b, t] (%arg0 = %y[b, t] : !pdg.value<[b, t], tensor<8xf32>>) -> tensor<8xf32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    pdg.output "y" %copy : !pdg.value<[b, t], tensor<8xf32>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "pointwise"}> ({
// GENERIC:         "pdg.node"(%{{.*}}, %{{.*}}) <{accesses = [#pdg.access<(d0, d1) : [d0, d1]>, #pdg.access<(d0, d1) : []>], conditions = [#set{{[0-9]*}}], name = "y", symbols = []}> ({
// GENERIC-NEXT:    ^bb0(%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>):
pdg.graph @pointwise {
  pdg.dim @b < launch B
  pdg.dim @t < 16
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<8xf32>>
  %bias = pdg.input "bias" : !pdg.value<[], tensor<8xf32>>
  %y = pdg.node "y" [b, t] (%v = %x[b, t] : !pdg.value<[b, t], tensor<8xf32>>, %w = %bias[] : !pdg.value<[], tensor<8xf32>>) -> tensor<8xf32> {
    %s = arith.addf %v, %w : tensor<8xf32>
    pdg.yield %s : tensor<8xf32>
  }
  %c = pdg.node "copy" [b, t] (%v = %y[b, t] : !pdg.value<[b, t], tensor<8xf32>>) -> tensor<8xf32> {
    pdg.yield %v : tensor<8xf32>
  }
  pdg.output "y" %c : !pdg.value<[b, t], tensor<8xf32>>
}

// The same producer read twice, and a node read by a node defined earlier in
// the graph region (uses may precede definitions).
// CHECK-LABEL: pdg.graph @forward_reference {
// CHECK-NEXT:    pdg.dim @t < 4
// CHECK-NEXT:    %sum = pdg.node "sum" [t] (%arg0 = %later[t] : !pdg.value<[t], tensor<f32>>, %arg1 = %later[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      %[[S:.*]] = arith.addf %arg0, %arg1 : tensor<f32>
// CHECK-NEXT:      pdg.yield %[[S]] : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %later = pdg.node "later" [t] -> tensor<f32> {
// CHECK:         }
// CHECK-NEXT:    pdg.output "sum" %sum : !pdg.value<[t], tensor<f32>>
pdg.graph @forward_reference {
  pdg.dim @t < 4
  %sum = pdg.node "sum" [t] (%a = %later[t] : !pdg.value<[t], tensor<f32>>, %b = %later[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %s = arith.addf %a, %b : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  %later = pdg.node "later" [t] -> tensor<f32> {
    %c = arith.constant dense<1.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
  pdg.output "sum" %sum : !pdg.value<[t], tensor<f32>>
}

// Discardable attributes on a node follow the point type, after the
// `attributes` keyword; the yield may carry attributes too.
// CHECK-LABEL: pdg.graph @node_attrs {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> attributes {pdg.fuse = true, pdg.tile = [4, 2]} {
// CHECK-NEXT:      pdg.yield %arg0 {pdg.last} : tensor<f32>
// CHECK-NEXT:    }
pdg.graph @node_attrs {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> attributes {pdg.tile = [4, 2], pdg.fuse = true} {
    pdg.yield %v {pdg.last} : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
