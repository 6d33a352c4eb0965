// A value carried along a loop and its update share one store
// (pdg/lowering/updated_in_place.py): `w` is the input at the first step and
// `u` of the step before after it; `u` reads `w` at its own step, after every
// other reader. The entry gives `u` the input's buffer (donated: the runtime
// passes the caller's array or a copy), calls neither of `w`'s copies, and
// `u`'s wrapper reads its operand from the slot it writes. (Nothing else
// reads `u`: its store keeps one step.)
// RUN: pdg-opt %s --split-input-file --pdg-schedule --pdg-plan-storage --pdg-lower-to-loops | FileCheck %s

!w = !pdg.value<[i], tensor<4xf32>>

// CHECK-LABEL: func.func private @train_u_0_in_place0_into(
// CHECK-SAME: %[[G:[^:]*]]: memref<4xf32, {{.*}}>, %{{[^:]*}}: index, %[[SLOT:[^:]*]]: memref<4xf32, {{.*}}>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[SLOT]], %[[G]] : {{.*}}) outs(%[[SLOT]] :
// CHECK-LABEL: func.func @pdg_train(
// CHECK-SAME: %[[W0:[^:]*]]: memref<4xf32>
// CHECK: %[[STORE:.*]] = memref.expand_shape %[[W0]] {{\[\[}}0, 1]] output_shape [1, 4] : memref<4xf32> into memref<1x4xf32>
// CHECK-NOT: call @train_w_
// CHECK: call @train_g_0_into(
// CHECK-NOT: call @train_w_
// CHECK: call @train_u_0_in_place0_into(
// CHECK-NOT: memref.dealloc %[[STORE]]
// CHECK: return
pdg.graph @train {
  pdg.dim @i < launch I
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<4xf32>>
  %w = pdg.node "w" [i] -> tensor<4xf32>
    case (i == 0) (%v = %w0[] : !pdg.value<[], tensor<4xf32>>) {
      pdg.yield %v : tensor<4xf32>
    }
    case (i >= 1) (%v = %u[i - 1] : !w) {
      pdg.yield %v : tensor<4xf32>
    }
  %g = pdg.node "g" [i] (%v = %w[i] : !w) -> tensor<4xf32> {
    %m = arith.mulf %v, %v : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  %u = pdg.node "u" [i] (%v = %w[i] : !w, %d = %g[i] : !w) -> tensor<4xf32> {
    %n = arith.subf %v, %d : tensor<4xf32>
    pdg.yield %n : tensor<4xf32>
  }
  pdg.output "g" %g : !w
}

// -----

!w = !pdg.value<[i], tensor<4xf32>>

// `late` reads `w` and `u` at the same step: it runs after `u`, so `w`
// keeps a store of its own and both of its copies run.
// CHECK-LABEL: func.func @pdg_read_after(
// CHECK-NOT: memref.expand_shape
//   (Both of w's cases copy their operand: one function.)
// CHECK: call @read_after_w_0_into(
// CHECK: call @read_after_w_0_into(
// CHECK: call @read_after_u_0_into(
// CHECK: call @read_after_late_0_into(
pdg.graph @read_after {
  pdg.dim @i < launch I
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<4xf32>>
  %w = pdg.node "w" [i] -> tensor<4xf32>
    case (i == 0) (%v = %w0[] : !pdg.value<[], tensor<4xf32>>) {
      pdg.yield %v : tensor<4xf32>
    }
    case (i >= 1) (%v = %u[i - 1] : !w) {
      pdg.yield %v : tensor<4xf32>
    }
  %u = pdg.node "u" [i] (%v = %w[i] : !w) -> tensor<4xf32> {
    %n = arith.mulf %v, %v : tensor<4xf32>
    pdg.yield %n : tensor<4xf32>
  }
  %late = pdg.node "late" [i] (%v = %w[i] : !w, %n = %u[i] : !w) -> tensor<4xf32> {
    %d = arith.subf %n, %v : tensor<4xf32>
    pdg.yield %d : tensor<4xf32>
  }
  pdg.output "late" %late : !w
}
