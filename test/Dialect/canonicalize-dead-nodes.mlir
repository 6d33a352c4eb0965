// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization erases dead nodes and self-only recurrences, keeping inputs, dims, udfs and `until` nodes.

// Nodes are Pure: a node nobody reads is erased, and so is a chain of them.
// Program inputs, dims and udfs are kept even when unused.
// CHECK-LABEL: pdg.graph @unused_nodes {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    pdg.dim @unused_dim < 4
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    %unused_input = pdg.input "unused_input" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    %log = pdg.udf "log" [t] (%x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
// CHECK-NEXT:    %live = pdg.node "live" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    pdg.output "live" %live : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:  }
pdg.graph @unused_nodes {
  pdg.dim @t < 8
  pdg.dim @unused_dim < 4
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %unused_input = pdg.input "unused_input" : !pdg.value<[], tensor<f32>>
  %dead1 = pdg.node "dead1" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %s = arith.addf %a, %a : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  %dead2 = pdg.node "dead2" [] (%a = %dead1[0 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<8xf32> {
    pdg.yield %a : tensor<8xf32>
  }
  %log = pdg.udf "log" [t] (%x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
  %live = pdg.node "live" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "live" %live : !pdg.value<[t], tensor<f32>>
}

// -----

// A recurrence only read by itself is dead; one read by an output is not.
// CHECK-LABEL: pdg.graph @self_only_recurrence {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %kept = pdg.node "kept" [t] -> tensor<i64>
// CHECK-NEXT:      case (t == 0) {
// CHECK:           case (t >= 1) (%arg0 = %kept[t - 1] : !pdg.value<[t], tensor<i64>>) {
// CHECK:         pdg.output "kept" %kept : !pdg.value<[t], tensor<i64>>
// CHECK-NOT:     pdg.node
// CHECK:       }
pdg.graph @self_only_recurrence {
  pdg.dim @t < 8
  %count = pdg.node "count" [t] -> tensor<i64>
    case (t == 0) {
      %z = arith.constant dense<0> : tensor<i64>
      pdg.yield %z : tensor<i64>
    }
    case (t >= 1) (%p = %count[t - 1] : !pdg.value<[t], tensor<i64>>) {
      %one = arith.constant dense<1> : tensor<i64>
      %n = arith.addi %p, %one : tensor<i64>
      pdg.yield %n : tensor<i64>
    }
  %kept = pdg.node "kept" [t] -> tensor<i64>
    case (t == 0) {
      %z = arith.constant dense<0> : tensor<i64>
      pdg.yield %z : tensor<i64>
    }
    case (t >= 1) (%p = %kept[t - 1] : !pdg.value<[t], tensor<i64>>) {
      pdg.yield %p : tensor<i64>
    }
  pdg.output "kept" %kept : !pdg.value<[t], tensor<i64>>
}

// -----

// A self-only recurrence that reads other nodes goes, and then so do they.
// CHECK-LABEL: pdg.graph @self_only_recurrence_chain {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:  }
pdg.graph @self_only_recurrence_chain {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %sq = pdg.node "sq" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %m = arith.mulf %a, %a : tensor<f32>
    pdg.yield %m : tensor<f32>
  }
  %acc = pdg.node "acc" [t] -> tensor<f32>
    case (t == 0) (%a = %sq[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %acc[t - 1] : !pdg.value<[t], tensor<f32>>, %a = %sq[t] : !pdg.value<[t], tensor<f32>>) {
      %s = arith.addf %p, %a : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
}

// -----

// A node that ends a dynamic dim is live through the dim's `until`, and the
// recurrence it reads is live too.
// CHECK-LABEL: pdg.graph @until_keeps_nodes {
// CHECK-NEXT:    pdg.dim @t < dynamic T max 32 until %done : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:    %n = pdg.node "n" [t] -> tensor<i64>
// CHECK:         %done = pdg.node "done" [t] (%arg0 = %n[t] : !pdg.value<[t], tensor<i64>>) -> tensor<i1> {
// CHECK:       }
pdg.graph @until_keeps_nodes {
  pdg.dim @t < dynamic T max 32 until %done : !pdg.value<[t], tensor<i1>>
  %n = pdg.node "n" [t] -> tensor<i64>
    case (t == 0) {
      %z = arith.constant dense<0> : tensor<i64>
      pdg.yield %z : tensor<i64>
    }
    case (t >= 1) (%p = %n[t - 1] : !pdg.value<[t], tensor<i64>>) {
      %one = arith.constant dense<1> : tensor<i64>
      %s = arith.addi %p, %one : tensor<i64>
      pdg.yield %s : tensor<i64>
    }
  %done = pdg.node "done" [t] (%v = %n[t] : !pdg.value<[t], tensor<i64>>) -> tensor<i1> {
    %ten = arith.constant dense<10> : tensor<i64>
    %d = arith.cmpi sge, %v, %ten : tensor<i64>
    pdg.yield %d : tensor<i1>
  }
}
