// pdg-plan-storage: each value's store from its footprint (isl).
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage | FileCheck %s

!v = !pdg.value<[b, t], tensor<4xf32>>

// CHECK-LABEL: pdg.graph @patterns
// CHECK: %x = pdg.input "x" {pdg.store = #pdg.store<input, [B, T]>}
// CHECK: %k = pdg.node "k" [b, t] {{.*}} attributes {pdg.store = #pdg.store<window, [B, 8]>}
// CHECK: %kb = pdg.node "kb" [b, t] {{.*}} attributes {pdg.store = #pdg.store<block, [B, 4]>}
// CHECK: %kf = pdg.node "kf" [b, t] {{.*}} attributes {pdg.store = #pdg.store<full, [B, T]>}
// CHECK: %win = pdg.node "win" [b, t] {{.*}} attributes {pdg.store = #pdg.store<point, [B, 1]>}
// CHECK: %out = pdg.node "out" [b, t] {{.*}} attributes {pdg.store = #pdg.store<full, [B, T]>}
pdg.graph @patterns {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %x = pdg.input "x" : !v
  %k = pdg.node "k" [b, t] (%a = %x[b, t] : !v) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  %kb = pdg.node "kb" [b, t] (%a = %x[b, t] : !v) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  %kf = pdg.node "kf" [b, t] (%a = %x[b, t] : !v) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  %win = pdg.node "win" [b, t] (%w = %k[b, max(0, t - 7) : t + 1] : !v,
                                %c = %kb[b, (t floordiv 4) * 4 : t + 1] : !v,
                                %f = %kf[b, 0 : t + 1] : !v) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %r = tensor.extract_slice %w[0, 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<4xf32>
    pdg.yield %r : tensor<4xf32>
  }
  %out = pdg.node "out" [b, t] (%a = %win[b, t] : !v) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  pdg.output "out" %out : !v
}

// -----

// A recurrence keeps one step back (x[t - 1]): a window of 2; a dynamic
// dim's full store grows with the discovered bound.
// CHECK-LABEL: pdg.graph @recurrence
// CHECK: %s = pdg.node "s" [t] -> tensor<f32> attributes {pdg.store = #pdg.store<growable, [T]>}
// CHECK: %x = pdg.node "x" [t] -> tensor<f32> attributes {pdg.store = #pdg.store<window, [2]>}
// CHECK: %done = pdg.node "done" [t] {{.*}} attributes {pdg.store = #pdg.store<point, [1]>}
pdg.graph @recurrence {
  pdg.dim @t < dynamic T max 100 until %done : !pdg.value<[t], tensor<i1>>
  %s = pdg.node "s" [t] -> tensor<f32>
    case (t == 0) {
      %z = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %z : tensor<f32>
    }
    case (t >= 1) (%p = %x[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  %x = pdg.node "x" [t] -> tensor<f32>
    case (t == 0) {
      %z = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %z : tensor<f32>
    }
    case (t >= 1) (%p = %x[t - 1] : !pdg.value<[t], tensor<f32>>) {
      %r = arith.addf %p, %p : tensor<f32>
      pdg.yield %r : tensor<f32>
    }
  %done = pdg.node "done" [t] (%p = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {
    %lim = arith.constant dense<1000.0> : tensor<f32>
    %c = arith.cmpf ogt, %p, %lim : tensor<f32>
    pdg.yield %c : tensor<i1>
  }
  pdg.output "s" %s : !pdg.value<[t], tensor<f32>>
}

// -----

// A consumer over [b] reading the whole sequence needs every step of t. No
// read moves along t inside a step, so t is parallel and y is kept whole
// (every coordinate of both parallel dims) before `total` runs.
// CHECK-LABEL: pdg.graph @after_the_loop
// CHECK: %y = pdg.node "y" [b, t] {{.*}} attributes {pdg.store = #pdg.store<point, [B, 16]>}
// CHECK: %total = pdg.node "total" [b] {{.*}} attributes {pdg.store = #pdg.store<point, [B]>}
pdg.graph @after_the_loop {
  pdg.dim @b < launch B
  pdg.dim @t < 16
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  %y = pdg.node "y" [b, t] (%a = %x[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  %total = pdg.node "total" [b] (%a = %y[b, 0 : 16] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    %c0 = arith.constant 0 : index
    %e = tensor.extract %a[%c0] : tensor<16xf32>
    %r = tensor.from_elements %e : tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "total" %total : !pdg.value<[b], tensor<f32>>
}
