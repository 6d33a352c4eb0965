// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization of pdg: dead nodes, self-only recurrences, access and condition simplification, dead cases, inputs, symbols.

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

// -----

// A case whose condition can never hold is dropped, and with it its inputs.
// CHECK-LABEL: pdg.graph @drop_false_case {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) {
// CHECK:           case (t >= 1) (%arg0 = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
pdg.graph @drop_false_case {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= t + 1) (%a = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (1 == 0) {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 1) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// Cases after an always-true case (`default`, or a condition that folds to
// true) are never chosen and are dropped; a single remaining always-true
// case prints in the short form.
// CHECK-LABEL: pdg.graph @drop_shadowed_cases {
// CHECK:         %a = pdg.node "a" [t] -> tensor<f32>
// CHECK-NEXT:      case (t <= 3) {
// CHECK-NEXT:        %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:        pdg.yield %[[C]] : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    %b = pdg.node "b" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    pdg.output "a" %a : !pdg.value<[t], tensor<f32>>
pdg.graph @drop_shadowed_cases {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %a = pdg.node "a" [t] -> tensor<f32>
    case (t <= 3) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 5) (%v = %x[0] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    default {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  %b = pdg.node "b" [t] -> tensor<f32>
    case (3 >= 2, t - t == 0) (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 5) {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  pdg.output "a" %a : !pdg.value<[t], tensor<f32>>
  pdg.output "b" %b : !pdg.value<[t], tensor<f32>>
}

// -----

// Constraints that always hold and repeated constraints are removed.
// CHECK-LABEL: pdg.graph @simplify_conditions {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (t <= 3) {
// CHECK:           case (t >= 0) {
// CHECK:           default {
pdg.graph @simplify_conditions {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t <= 3, t <= 3) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 0, 3 >= 2) {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default {
      %c = arith.constant dense<3.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// A single case that can never hold is kept: a node needs a case.
// CHECK-LABEL: pdg.graph @keep_only_case {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (0 == -1) {
pdg.graph @keep_only_case {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] -> tensor<f32>
    case (1 == 0) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// Inputs whose block argument is unused are dropped, in every case.
// CHECK-LABEL: pdg.graph @drop_unused_inputs {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %z = pdg.node "z" [t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) {
// CHECK-NEXT:        %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:        pdg.yield %[[C]] : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %a[t] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
pdg.graph @drop_unused_inputs {
  pdg.dim @t < 8
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  %b = pdg.input "b" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%u = %a[t] : !pdg.value<[t], tensor<f32>>, %v = %b[t] : !pdg.value<[t], tensor<f32>>, %w = %a[0 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %z = pdg.node "z" [t] -> tensor<f32>
    case (t == 0) (%u = %a[t] : !pdg.value<[t], tensor<f32>>) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%u = %b[t] : !pdg.value<[t], tensor<f32>>, %v = %a[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
  pdg.output "z" %z : !pdg.value<[t], tensor<f32>>
}

// -----

// Once the only input that mentions a symbol is gone, the symbol is pruned;
// symbols still used (here by a condition) stay.
// CHECK-LABEL: pdg.graph @prune_symbols {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:         %z = pdg.node "z" [t] -> tensor<f32>
// CHECK-NEXT:      case (t >= T - 1) {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "prune_symbols"}> ({
// GENERIC:         "pdg.node"(%{{.*}}) <{accesses = [#pdg.access<(d0) : [d0]>], conditions = [#{{.*}}], name = "y", symbols = []}>
// GENERIC:         "pdg.node"(%{{.*}}) <{accesses = [#pdg.access<(d0)[s0] : [d0]>], conditions = [#{{.*}}, #{{.*}}], name = "z", symbols = ["T"]}>
pdg.graph @prune_symbols {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%all = %x[0 : T] : !pdg.value<[t], tensor<f32>>, %v = %x[t] : !pdg.value<[t], tensor<f32>>, %w = %x[max(0, B - 1) : B] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %z = pdg.node "z" [t] -> tensor<f32>
    case (t >= T - 1) (%w = %x[0 : B] : !pdg.value<[t], tensor<f32>>) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
  pdg.output "z" %z : !pdg.value<[t], tensor<f32>>
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

// -----

// Upstream patterns and folders run inside node bodies too: dead
// arithmetic is removed.
// CHECK-LABEL: pdg.graph @bodies_are_folded {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
pdg.graph @bodies_are_folded {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %zero = arith.constant dense<0> : tensor<i32>
    %one = arith.constant dense<1> : tensor<i32>
    %dead = arith.addi %zero, %one : tensor<i32>
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
