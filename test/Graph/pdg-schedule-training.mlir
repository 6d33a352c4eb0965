// Roles and schedules of gradient and training programs. A read ahead along
// t (a gradient reading the forward pass at t + 1) keeps t parallel: the
// producer is computed whole first. An iteration loop over i carries the
// weights; inside one iteration t is still parallel. A recurrence and its
// gradient run in two nests over t: forward, then backward.
// RUN: pdg-opt %s --split-input-file --pdg-schedule | FileCheck %s
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage | FileCheck %s --check-prefix=STORE

!s = !pdg.value<[t], tensor<f32>>

// No loop: every value runs whole, producers first even when written later.
// CHECK-LABEL: pdg.graph @read_ahead
// CHECK: %g = pdg.node "g" {{.*}}pdg.schedule = {group = 0 : i64, loops = [], order = 2 : i64, phase = "before"
// CHECK: %f = pdg.node "f" {{.*}}pdg.schedule = {group = 0 : i64, loops = [], order = 1 : i64, phase = "before"
// STORE-LABEL: pdg.graph @read_ahead
// STORE: %f = pdg.node "f" {{.*}}#pdg.store<point, [8]>
pdg.graph @read_ahead {
  pdg.dim @t < 8
  %x = pdg.input "x" : !s
  %g = pdg.node "g" [t] -> tensor<f32>
    case (t <= 6) (%n = %f[t + 1] : !s, %c = %f[t] : !s) {
      %s = arith.addf %n, %c : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
    default (%c = %f[t] : !s) {
      pdg.yield %c : tensor<f32>
    }
  %f = pdg.node "f" [t] (%a = %x[t] : !s) -> tensor<f32> {
    %s = arith.mulf %a, %a : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  pdg.output "g" %g : !s
}

// -----

!it = !pdg.value<[i], tensor<f32>>
!step = !pdg.value<[i, t], tensor<f32>>

// w[i] = w[i - 1] - loss[i - 1]: a loop over i only, keeping two weights (the
// previous one is read while the next is written). In an iteration, f
// runs whole over t before g reads it ahead, and the loss after both.
// CHECK-LABEL: pdg.graph @iterations
// CHECK: %w = pdg.node "w" {{.*}}group = 1 : i64, loops = ["i"], order = 2 : i64, phase = "loop", stage = 0
// CHECK: %f = pdg.node "f" {{.*}}group = 1 : i64, loops = ["i"], order = 3 : i64, phase = "loop", stage = 1
// CHECK: %g = pdg.node "g" {{.*}}group = 1 : i64, loops = ["i"], order = 4 : i64, phase = "loop", stage = 2
// CHECK: %loss = pdg.node "loss" {{.*}}group = 1 : i64, loops = ["i"], order = 5 : i64, phase = "loop", stage = 3
// STORE-LABEL: pdg.graph @iterations
// STORE: %w = pdg.node "w" {{.*}}#pdg.store<window, [2]>
// STORE: %f = pdg.node "f" {{.*}}#pdg.store<point, [1, 4]>
pdg.graph @iterations {
  pdg.dim @i < launch I
  pdg.dim @t < 4
  %x = pdg.input "x" : !step
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<f32>>
  %w = pdg.node "w" [i] -> tensor<f32>
    case (i == 0) (%a = %w0[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (i >= 1) (%a = %w[i - 1] : !it, %l = %loss[i - 1] : !it) {
      %s = arith.subf %a, %l : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  %f = pdg.node "f" [i, t] (%a = %x[i, t] : !step, %b = %w[i] : !it) -> tensor<f32> {
    %s = arith.mulf %a, %b : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  %g = pdg.node "g" [i, t] -> tensor<f32>
    case (t <= 2) (%n = %f[i, t + 1] : !step) {
      pdg.yield %n : tensor<f32>
    }
    default (%c = %f[i, t] : !step) {
      pdg.yield %c : tensor<f32>
    }
  %loss = pdg.node "loss" [i] (%a = %g[i, 0 : 4] : !step) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %a[%c0] : tensor<4xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "loss" %loss : !it
}

// -----

!v = !pdg.value<[t], tensor<f32>>

// h[t] = h[t - 1] * x[t] forward; d[t] = d[t + 1] * x[t + 1] + h[t] backward
// (a gradient's shape), then a total. h is read by the second nest, so it
// keeps every step; d only the step before.
// CHECK-LABEL: pdg.graph @two_nests
// CHECK: %h = pdg.node "h" {{.*}}group = 1 : i64, loops = ["t"], order = 1 : i64, phase = "loop", stage = 0
// CHECK: %d = pdg.node "d" {{.*}}group = 3 : i64, loops = ["t"], order = 2 : i64, phase = "loop", reverse = ["t"], stage = 0
// CHECK: %total = pdg.node "total" {{.*}}group = 4 : i64, loops = [], order = 3 : i64, phase = "after"
// STORE-LABEL: pdg.graph @two_nests
// STORE: %h = pdg.node "h" {{.*}}#pdg.store<full, [8]>
// STORE: %d = pdg.node "d" {{.*}}#pdg.store<full, [8]>
pdg.graph @two_nests {
  pdg.dim @t < 8
  %x = pdg.input "x" : !v
  %h = pdg.node "h" [t] -> tensor<f32>
    case (t == 0) (%a = %x[t] : !v) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %h[t - 1] : !v, %a = %x[t] : !v) {
      %s = arith.mulf %p, %a : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  %d = pdg.node "d" [t] -> tensor<f32>
    case (t <= 6) (%n = %d[t + 1] : !v, %a = %x[t + 1] : !v, %c = %h[t] : !v) {
      %m = arith.mulf %n, %a : tensor<f32>
      %s = arith.addf %m, %c : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
    default (%c = %h[t] : !v) {
      pdg.yield %c : tensor<f32>
    }
  %total = pdg.node "total" [] (%a = %d[0 : 8] : !v) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %a[%c0] : tensor<8xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "total" %total : !pdg.value<[], tensor<f32>>
}
