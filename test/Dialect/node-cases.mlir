// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of the multi-case form of pdg.node: `case (...)` conditions, `default`, recurrences.

// The generic form holds the conditions as affine sets over the node's dims
// and (sorted) symbols.
// GENERIC-DAG: #[[T_EQ_0:set[0-9]*]] = affine_set<(d0) : (d0 == 0)>
// GENERIC-DAG: #[[T_GE_1:set[0-9]*]] = affine_set<(d0) : (d0 - 1 >= 0)>
// GENERIC-DAG: #[[ALWAYS:set[0-9]*]] = affine_set<(d0) : (0 >= 0)>
// GENERIC-DAG: #[[LAST:set[0-9]*]] = affine_set<(d0, d1)[s0] : (d1 - (s0 - 1) == 0)>
// GENERIC-DAG: #[[ALWAYS_S:set[0-9]*]] = affine_set<(d0, d1)[s0] : (0 >= 0)>

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

// Conditions are normalized and printed with positive coefficients on each
// side: `<` and `>` become `<=` and `>=`, constants move to the right.
// CHECK-LABEL: pdg.graph @condition_syntax {
// CHECK:         %c = pdg.node "c" [b, t] -> tensor<i32>
// CHECK-NEXT:      case (t <= 7, b >= 1) {
// CHECK:           case (t * 2 >= b - 1) {
// CHECK:           case (t == b + 3) {
// CHECK:           case (B >= t) {
// CHECK:           case (t mod 2 == 0, b + t <= 3) {
// CHECK:           case ((t floordiv 4) * 4 == t - 2) {
// CHECK:           case (t >= B - 1, b >= 0) {
// CHECK:           default {
// CHECK-NEXT:        %[[D:.*]] = arith.constant dense<7> : tensor<i32>
// CHECK-NEXT:        pdg.yield %[[D]] : tensor<i32>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "c" %c : !pdg.value<[b, t], tensor<i32>>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "condition_syntax"}> ({
// GENERIC:         "pdg.node"() <{accesses = [], conditions = [{{.*}}], name = "c", symbols = ["B"]}> ({
pdg.graph @condition_syntax {
  pdg.dim @b < launch B
  pdg.dim @t < 16
  %c = pdg.node "c" [b, t] -> tensor<i32>
    case (t < 8, b > 0) {
      %v = arith.constant dense<0> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (2 * t + 1 >= b) {
      %v = arith.constant dense<1> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t - b == 3) {
      %v = arith.constant dense<2> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t <= B) {
      %v = arith.constant dense<3> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t mod 2 == 0, b + t <= 3) {
      %v = arith.constant dense<4> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case ((t floordiv 4) * 4 == t - 2) {
      %v = arith.constant dense<5> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t + 1 >= B, 0 <= b) {
      %v = arith.constant dense<6> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    default {
      %v = arith.constant dense<7> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
  pdg.output "c" %c : !pdg.value<[b, t], tensor<i32>>
}

// The token loop of a decoder: two values that read each other, one of them
// at the previous step; a condition on the last step uses a launch bound.
// CHECK-LABEL: pdg.graph @decode_loop {
// CHECK-NEXT:    pdg.dim @b < launch B max 64
// CHECK-NEXT:    pdg.dim @t < launch T
// CHECK-NEXT:    %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
// CHECK-NEXT:    %tok = pdg.node "tok" [b, t] -> tensor<i64>
// CHECK-NEXT:      case (t == 0) (%arg0 = %prompt[b] : !pdg.value<[b], tensor<i64>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      case (t >= 1) (%arg0 = %next[b, t - 1] : !pdg.value<[b, t], tensor<i64>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:    %next = pdg.node "next" [b, t] -> tensor<i64>
// CHECK-NEXT:      case (t == T - 1) {
// CHECK-NEXT:        %[[EOS:.*]] = arith.constant dense<0> : tensor<i64>
// CHECK-NEXT:        pdg.yield %[[EOS]] : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %tok[b, t] : !pdg.value<[b, t], tensor<i64>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<i64>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "tokens" %next : !pdg.value<[b, t], tensor<i64>>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "decode_loop"}> ({
// GENERIC:         "pdg.node"(%{{.*}}) <{accesses = [#pdg.access<(d0, d1)[s0] : [d0, d1]>], conditions = [#[[LAST]], #[[ALWAYS_S]]], name = "next", symbols = ["T"]}> ({
pdg.graph @decode_loop {
  pdg.dim @b < launch B max 64
  pdg.dim @t < launch T
  %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
  %tok = pdg.node "tok" [b, t] -> tensor<i64>
    case (t == 0) (%p = %prompt[b] : !pdg.value<[b], tensor<i64>>) {
      pdg.yield %p : tensor<i64>
    }
    case (t >= 1) (%n = %next[b, t - 1] : !pdg.value<[b, t], tensor<i64>>) {
      pdg.yield %n : tensor<i64>
    }
  %next = pdg.node "next" [b, t] -> tensor<i64>
    case (t == T - 1) {
      %eos = arith.constant dense<0> : tensor<i64>
      pdg.yield %eos : tensor<i64>
    }
    default (%x = %tok[b, t] : !pdg.value<[b, t], tensor<i64>>) {
      pdg.yield %x : tensor<i64>
    }
  pdg.output "tokens" %next : !pdg.value<[b, t], tensor<i64>>
}

// A two-dimensional recurrence (edit-distance style): edges are base cases,
// the interior reads the left, upper and diagonal neighbours. Several
// constraints in one case are a conjunction.
// CHECK-LABEL: pdg.graph @grid {
// CHECK:         %d = pdg.node "d" [i, j] -> tensor<i32>
// CHECK-NEXT:      case (i == 0) {
// CHECK:           case (j == 0) {
// CHECK:           case (i >= 1, j >= 1) (%arg0 = %d[i - 1, j] : !pdg.value<[i, j], tensor<i32>>, %arg1 = %d[i, j - 1] : !pdg.value<[i, j], tensor<i32>>, %arg2 = %d[i - 1, j - 1] : !pdg.value<[i, j], tensor<i32>>) {
// CHECK-NEXT:        %[[M0:.*]] = arith.minsi %arg0, %arg1 : tensor<i32>
// CHECK-NEXT:        %[[M1:.*]] = arith.minsi %[[M0]], %arg2 : tensor<i32>
// CHECK-NEXT:        pdg.yield %[[M1]] : tensor<i32>
// CHECK-NEXT:      }
pdg.graph @grid {
  pdg.dim @i < 10
  pdg.dim @j < 12
  %d = pdg.node "d" [i, j] -> tensor<i32>
    case (i == 0) {
      %c = arith.constant dense<0> : tensor<i32>
      pdg.yield %c : tensor<i32>
    }
    case (j == 0) {
      %c = arith.constant dense<1> : tensor<i32>
      pdg.yield %c : tensor<i32>
    }
    case (i >= 1, j >= 1) (%up = %d[i - 1, j] : !pdg.value<[i, j], tensor<i32>>, %left = %d[i, j - 1] : !pdg.value<[i, j], tensor<i32>>, %diag = %d[i - 1, j - 1] : !pdg.value<[i, j], tensor<i32>>) {
      %m0 = arith.minsi %up, %left : tensor<i32>
      %m1 = arith.minsi %m0, %diag : tensor<i32>
      pdg.yield %m1 : tensor<i32>
    }
  pdg.output "d" %d : !pdg.value<[i, j], tensor<i32>>
}

// A recurrence through a slice: at t the node reads every earlier point of
// itself (a prefix ending at t, empty at t = 0), so a single case suffices.
// CHECK-LABEL: pdg.graph @prefix_self_read {
// CHECK-NEXT:    pdg.dim @t < 32
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    %s = pdg.node "s" [t] (%arg0 = %s[0 : t] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @prefix_self_read {
  pdg.dim @t < 32
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %s = pdg.node "s" [t] (%prev = %s[0 : t] : !pdg.value<[t], tensor<f32>>, %v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %r = linalg.reduce ins(%prev : tensor<?xf32>) outs(%v : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    pdg.yield %r : tensor<f32>
  }
  pdg.output "s" %s : !pdg.value<[t], tensor<f32>>
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

// Any single constraint implying `t >= distance` guards a read of an earlier
// point: `t > 0`, `1 <= t`, `t == 3` (reading t - 2), `t >= 5` (t - 3).
// CHECK-LABEL: pdg.graph @guards {
// CHECK:         %y = pdg.node "y" [b, t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) {
// CHECK:           case (t == 3) (%arg0 = %y[b, t - 2] : !pdg.value<[b, t], tensor<f32>>) {
// CHECK:           case (t >= 5) (%arg0 = %y[b, t - 3] : !pdg.value<[b, t], tensor<f32>>) {
// CHECK:           case (t >= 1, b >= 1) (%arg0 = %y[b - 1, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
// CHECK:           case (t >= 1) (%arg0 = %y[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
pdg.graph @guards {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %y = pdg.node "y" [b, t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t == 3) (%p = %y[b, t - 2] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    case (t >= 5) (%p = %y[b, t - 3] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    case (t > 0, 1 <= b) (%p = %y[b - 1, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
    case (1 <= t) (%p = %y[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[b, t], tensor<f32>>
}

// Cycles are fine when one read in them is of another point: an earlier
// point, a slice ending at t, or later points (whether reading the future is
// legal is for the analysis passes, not the verifier).
// CHECK-LABEL: pdg.graph @cycles_through_other_points {
// CHECK:         %a = pdg.node "a" [t] (%arg0 = %b[t + 1 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:         %b = pdg.node "b" [t] (%arg0 = %a[t] : !pdg.value<[t], tensor<f32>>, %arg1 = %c[max(0, t - 2) : t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:         %c = pdg.node "c" [t] (%arg0 = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @cycles_through_other_points {
  pdg.dim @t < 8
  %a = pdg.node "a" [t] (%later = %b[t + 1 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %c = arith.constant dense<0.0> : tensor<f32>
    pdg.yield %c : tensor<f32>
  }
  %b = pdg.node "b" [t] (%v = %a[t] : !pdg.value<[t], tensor<f32>>, %w = %c[max(0, t - 2) : t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %c = pdg.node "c" [t] (%v = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  pdg.output "c" %c : !pdg.value<[t], tensor<f32>>
}
