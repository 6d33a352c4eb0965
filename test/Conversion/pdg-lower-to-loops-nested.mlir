// Loop nests inside a loop nest: an iteration loop over i holds a
// generation loop over the dynamic t (x, ending per sequence b on `done`),
// values computed whole per iteration (w before it; r and q, s after), and
// a second pass over t once each sequence's length is known (y reads x at
// T - 1). The reads the i loop carries (w[i - 1], s[i - 1]) leave the graph
// inside one iteration, so its values split into their own nests.
// RUN: pdg-opt %s --pdg-schedule | FileCheck %s --check-prefix=SCHED
// RUN: pdg-opt %s --pdg-plan-storage | FileCheck %s --check-prefix=STORE
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

// SCHED: %w = pdg.node "w" {{.*}}group = 1 : i64, loops = ["i"], nest = [0]
// SCHED: %x = pdg.node "x" {{.*}}group = 1 : i64, loops = ["i", "t"], nest = [1]
// SCHED: %done = pdg.node "done" {{.*}}group = 1 : i64, loops = ["i", "t"], nest = [1]
// SCHED: %r = pdg.node "r" {{.*}}group = 1 : i64, loops = ["i"], nest = [2]
// SCHED: %y = pdg.node "y" {{.*}}group = 1 : i64, loops = ["i", "t"], nest = [3]
// SCHED: %q = pdg.node "q" {{.*}}group = 1 : i64, loops = ["i"], nest = [4]
// SCHED: %s = pdg.node "s" {{.*}}group = 1 : i64, loops = ["i"], nest = [4]

// x keeps one iteration and the steps its sequences ran (read after its
// loop over t): a growable store of [1, B, T]; s the iteration before.
// STORE: %x = pdg.node "x" {{.*}}#pdg.store<growable, [1, B, T]>
// STORE: %done = pdg.node "done" {{.*}}#pdg.store<point, [1, B, 1]>
// STORE: %r = pdg.node "r" {{.*}}#pdg.store<full, [I, B]>
// STORE: %s = pdg.node "s" {{.*}}#pdg.store<window, [2]>

// CHECK-LABEL: func.func @pdg_train(
// CHECK-SAME: %[[I:[^:]*]]: index, %[[B:[^:]*]]: index)
// CHECK: %[[X:.*]] = memref.alloc(%[[B]], %{{.*}}) : memref<1x?x?xf32>
// CHECK: %[[Y:.*]] = memref.alloc(%[[B]], %{{.*}}) : memref<1x?x?xf32>
// CHECK: %[[ALIVE:.*]] = memref.alloc(%[[B]]) : memref<?xi8>
// CHECK: %[[LENGTHS:.*]] = memref.alloc(%[[B]]) : memref<?xi64>
// CHECK: %[[LIVE:.*]] = memref.alloca() : memref<index>
// CHECK: %[[STEPS:.*]] = memref.alloca() : memref<index>
//   The loop over i carries the growable stores.
// CHECK: scf.for %[[IT:.*]] = %{{.*}} to %[[I]] step %{{.*}} iter_args(%[[X0:.*]] = %[[X]], %[[Y0:.*]] = %[[Y]])
// CHECK:   func.call @train_w_0_into(
// CHECK:   func.call @train_w_1_into(
//   Every sequence starts alive at each iteration.
// CHECK:   linalg.fill ins(%{{.*}} : i8) outs(%[[ALIVE]] : memref<?xi8>)
// CHECK:   memref.store %[[B]], %[[LIVE]][] : memref<index>
// CHECK:   %[[GEN:.*]]:3 = scf.while (%{{.*}} = %{{.*}}, %[[XW:.*]] = %[[X0]], %{{.*}} = %[[Y0]])
//   Only x grows in the generation loop.
// CHECK:     func.call @pdg_train_grow_0(%[[XW]],
// CHECK-NOT:   pdg_train_grow
// CHECK:     func.call @train_x_0_into(
// CHECK:     func.call @train_done_0_into(
// CHECK:     memref.store %{{.*}}, %[[LENGTHS]][%{{.*}}] : memref<?xi64>
// CHECK:   memref.store %[[GEN]]#0, %[[STEPS]][] : memref<index>
//   r reads each sequence's last step through its length.
// CHECK:   memref.load %[[LENGTHS]]
// CHECK:   func.call @train_r_0_into(
//   The second pass replays the steps: y's store holds them all first, and
//   a sequence's points run below its length.
// CHECK:   %[[N:.*]] = memref.load %[[STEPS]][] : memref<index>
// CHECK:   func.call @pdg_train_grow_0(%[[GEN]]#2,
// CHECK:   scf.for %[[K:.*]] = %{{.*}} to %[[N]] step
// CHECK:     scf.parallel (%[[SEQ:.*]]) =
// CHECK:       %[[LEN:.*]] = memref.load %[[LENGTHS]][%[[SEQ]]] : memref<?xi64>
// CHECK:       %[[LENI:.*]] = arith.index_cast %[[LEN]] : i64 to index
// CHECK:       arith.cmpi slt, %[[K]], %[[LENI]] : index
// CHECK:       func.call @train_y_0_into(
//   q passes its read on as r does: the same code, so r's wrapper.
// CHECK:   func.call @train_r_0_into(
// CHECK:   func.call @train_s_0_into(
// CHECK:   scf.yield
//   No lengths are returned for a dim looped over inside another loop.
// CHECK: memref.dealloc %[[LENGTHS]] : memref<?xi64>
// CHECK: return %{{.*}}, %{{.*}} : memref<?xf32>, memref<?x?xf32>{{$}}
!w = !pdg.value<[i], tensor<f32>>
!seq = !pdg.value<[i, b], tensor<f32>>
!step = !pdg.value<[i, b, t], tensor<f32>>

pdg.graph @train {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 8 until %done : !pdg.value<[i, b, t], tensor<i1>>
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<f32>>
  %a = pdg.input "a" : !pdg.value<[b], tensor<f32>>
  %w = pdg.node "w" [i] -> tensor<f32>
    case (i == 0) (%v = %w0[] : !pdg.value<[], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (i >= 1) (%v = %w[i - 1] : !w, %s = %s[i - 1] : !w) {
      %n = arith.addf %v, %s : tensor<f32>
      pdg.yield %n : tensor<f32>
    }
  %x = pdg.node "x" [i, b, t] -> tensor<f32>
    case (t == 0) (%v = %w[i] : !w, %c = %a[b] : !pdg.value<[b], tensor<f32>>) {
      %n = arith.mulf %v, %c : tensor<f32>
      pdg.yield %n : tensor<f32>
    }
    case (t >= 1) (%p = %x[i, b, t - 1] : !step, %v = %w[i] : !w) {
      %n = arith.addf %p, %v : tensor<f32>
      pdg.yield %n : tensor<f32>
    }
  %done = pdg.node "done" [i, b, t] (%v = %x[i, b, t] : !step) -> tensor<i1> {
    %c = arith.constant dense<3.0> : tensor<f32>
    %d = arith.cmpf ogt, %v, %c : tensor<f32>
    pdg.yield %d : tensor<i1>
  }
  %r = pdg.node "r" [i, b] (%v = %x[i, b, T - 1] : !step) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %y = pdg.node "y" [i, b, t] (%v = %x[i, b, t] : !step, %l = %x[i, b, T - 1] : !step) -> tensor<f32> {
    %n = arith.divf %v, %l : tensor<f32>
    pdg.yield %n : tensor<f32>
  }
  %q = pdg.node "q" [i, b] (%v = %y[i, b, 0] : !step) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %s = pdg.node "s" [i] (%v = %q[i, 0] : !seq, %u = %r[i, 0] : !seq) -> tensor<f32> {
    %c = arith.constant dense<0.01> : tensor<f32>
    %m = arith.mulf %v, %u : tensor<f32>
    %n = arith.mulf %m, %c : tensor<f32>
    pdg.yield %n : tensor<f32>
  }
  pdg.output "w" %w : !w
  pdg.output "r" %r : !seq
}
