// Roles and schedules of gradient and training programs. A read ahead along
// t (a gradient reading the forward pass at t + 1) keeps t parallel: the
// producer is computed whole first. An iteration loop over i carries the
// weights; inside one iteration t is still parallel.
// RUN: pdg-opt %s --split-input-file --pdg-schedule | FileCheck %s
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage | FileCheck %s --check-prefix=STORE

!s = !pdg.value<[t], tensor<f32>>

// No loop: every value runs whole, producers first even when written later.
// CHECK-LABEL: pdg.graph @read_ahead
// CHECK: %g = pdg.node "g" {{.*}}pdg.schedule = {loops = [], order = 2 : i64, phase = "before"
// CHECK: %f = pdg.node "f" {{.*}}pdg.schedule = {loops = [], order = 1 : i64, phase = "before"
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
// CHECK: %w = pdg.node "w" {{.*}}loops = ["i"], order = 2 : i64, phase = "loop", stage = 0
// CHECK: %f = pdg.node "f" {{.*}}loops = ["i"], order = 3 : i64, phase = "loop", stage = 1
// CHECK: %g = pdg.node "g" {{.*}}loops = ["i"], order = 4 : i64, phase = "loop", stage = 2
// CHECK: %loss = pdg.node "loss" {{.*}}loops = ["i"], order = 5 : i64, phase = "loop", stage = 3
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
