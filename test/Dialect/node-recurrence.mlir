// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// Round trip of recurrences: guarded reads of earlier points in one or two dims, a prefix self read.

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
