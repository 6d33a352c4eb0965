// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of the multi-case form of pdg.node: `case (...)`, `default`, attributes.

// The generic form holds the conditions as affine sets over the node's dims
// and (sorted) symbols.
// GENERIC-DAG: #[[T_EQ_0:set[0-9]*]] = affine_set<(d0) : (d0 == 0)>
// GENERIC-DAG: #[[T_GE_1:set[0-9]*]] = affine_set<(d0) : (d0 - 1 >= 0)>
// GENERIC-DAG: #[[ALWAYS:set[0-9]*]] = affine_set<(d0) : (0 >= 0)>

// A counter: a base case and a guarded recurrence reading the previous point.
// CHECK-LABEL: pdg.graph @counter {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %x = pdg.node "x" [t] -> tensor<i64>
// CHECK-NEXT:      case (t == 0) {
// CHECK-NEXT:        %[[Z:.*]] = arith.constant dense<0> : tensor<i64>
// CHECK-NEXT:        pdg.yield %[[Z]] : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      case (t >= 1) (%arg0 = %x[t - 1] : !pdg.value<[t], tensor<i64>>) {
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant dense<1> : tensor<i64>
// CHECK-NEXT:        %[[N:.*]] = arith.addi %arg0, %[[ONE]] : tensor<i64>
// CHECK-NEXT:        pdg.yield %[[N]] : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "x" %x : !pdg.value<[t], tensor<i64>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "counter"}> ({
// GENERIC:         "pdg.node"(%[[SELF:.*]]) <{accesses = [#pdg.access<(d0) : [d0 - 1]>], conditions = [#[[T_EQ_0]], #[[T_GE_1]]], name = "x", symbols = []}> ({
// GENERIC-NEXT:      %{{.*}} = "arith.constant"
// GENERIC-NEXT:      "pdg.yield"
// GENERIC-NEXT:    }, {
// GENERIC-NEXT:    ^bb0(%{{.*}}: tensor<i64>):
pdg.graph @counter {
  pdg.dim @t < 8
  %x = pdg.node "x" [t] -> tensor<i64>
    case (t == 0) {
      %z = arith.constant dense<0> : tensor<i64>
      pdg.yield %z : tensor<i64>
    }
    case (t >= 1) (%p = %x[t - 1] : !pdg.value<[t], tensor<i64>>) {
      %one = arith.constant dense<1> : tensor<i64>
      %n = arith.addi %p, %one : tensor<i64>
      pdg.yield %n : tensor<i64>
    }
  pdg.output "x" %x : !pdg.value<[t], tensor<i64>>
}

// The recurrent case first and a `default` base case last; each case takes
// its own inputs, and block arguments restart at %arg0 in every case.
// CHECK-LABEL: pdg.graph @default_last {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %init = pdg.input "init" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    %step = pdg.input "step" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    %acc = pdg.node "acc" [t] -> tensor<f32>
// CHECK-NEXT:      case (t >= 1) (%arg0 = %acc[t - 1] : !pdg.value<[t], tensor<f32>>, %arg1 = %step[t] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        %[[S:.*]] = arith.addf %arg0, %arg1 : tensor<f32>
// CHECK-NEXT:        pdg.yield %[[S]] : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %init[] : !pdg.value<[], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "acc" %acc : !pdg.value<[t], tensor<f32>>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "default_last"}> ({
// GENERIC:         "pdg.node"(%{{.*}}, %{{.*}}, %{{.*}}) <{accesses = [#pdg.access<(d0) : [d0 - 1]>, #pdg.access<(d0) : [d0]>, #pdg.access<(d0) : []>], conditions = [#[[T_GE_1]], #[[ALWAYS]]], name = "acc", symbols = []}> ({
pdg.graph @default_last {
  pdg.dim @t < 8
  %init = pdg.input "init" : !pdg.value<[], tensor<f32>>
  %step = pdg.input "step" : !pdg.value<[t], tensor<f32>>
  %acc = pdg.node "acc" [t] -> tensor<f32>
    case (t >= 1) (%p = %acc[t - 1] : !pdg.value<[t], tensor<f32>>, %s = %step[t] : !pdg.value<[t], tensor<f32>>) {
      %r = arith.addf %p, %s : tensor<f32>
      pdg.yield %r : tensor<f32>
    }
    default (%i = %init[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %i : tensor<f32>
    }
  pdg.output "acc" %acc : !pdg.value<[t], tensor<f32>>
}

// A multi-case node with discardable attributes, a single `default` case
// being printed in the short form, and a guard deeper than one step.
// CHECK-LABEL: pdg.graph @cases_attrs {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %fib = pdg.node "fib" [t] -> tensor<i64> attributes {pdg.kind = "fibonacci"}
// CHECK-NEXT:      case (t <= 1) {
// CHECK:           case (t >= 2) (%arg0 = %fib[t - 1] : !pdg.value<[t], tensor<i64>>, %arg1 = %fib[t - 2] : !pdg.value<[t], tensor<i64>>) {
// CHECK:         %only = pdg.node "only" [t] -> tensor<i64> {
// CHECK-NEXT:      %[[C:.*]] = arith.constant dense<5> : tensor<i64>
// CHECK-NEXT:      pdg.yield %[[C]] : tensor<i64>
// CHECK-NEXT:    }
pdg.graph @cases_attrs {
  pdg.dim @t < 8
  %fib = pdg.node "fib" [t] -> tensor<i64> attributes {pdg.kind = "fibonacci"}
    case (t <= 1) {
      %one = arith.constant dense<1> : tensor<i64>
      pdg.yield %one : tensor<i64>
    }
    case (t >= 2) (%a = %fib[t - 1] : !pdg.value<[t], tensor<i64>>, %b = %fib[t - 2] : !pdg.value<[t], tensor<i64>>) {
      %s = arith.addi %a, %b : tensor<i64>
      pdg.yield %s : tensor<i64>
    }
  %only = pdg.node "only" [t] -> tensor<i64>
    default {
      %c = arith.constant dense<5> : tensor<i64>
      pdg.yield %c : tensor<i64>
    }
  pdg.output "fib" %fib : !pdg.value<[t], tensor<i64>>
  pdg.output "only" %only : !pdg.value<[t], tensor<i64>>
}
