// pdg-lower-to-loops: the planned, scheduled graph becomes an entry function
// that owns the stores and runs the loop; bodies write into store slots.
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

// The bodies, bufferized: each writes its result into the slot it is given.
// Marked `pdg.in_parallel_loop` (the driver calls it inside a parallel loop:
// pdg-parallelize-large-ops leaves its ops whole) and `pdg.node` (the value
// its node computes: pdg-check-indices and the runtime name it on a bad index).
// CHECK-LABEL: func.func private @g_w_0_into(
// CHECK-SAME: %[[IN:.*]]: memref<?xf32, strided<[?], offset: ?>>, %{{.*}}: index, %{{.*}}: index, %[[OUT:.*]]: memref<1xf32, strided<[?], offset: ?>>) attributes {pdg.in_parallel_loop, pdg.node = "w"} {
// CHECK-NOT: memref.alloc
// CHECK: linalg.{{.*}}outs(%[[OUT]]
// CHECK: return{{$}}

// x keeps a window of 3 (a circular buffer), w is an output over a dynamic
// dim (growable), stop ends each sequence b on its own.
// CHECK-LABEL: func.func @pdg_g(
// CHECK-SAME: %[[X0:.*]]: memref<?xf32>, %[[B:.*]]: index) -> (memref<?x?x1xf32>, memref<?xi64>) attributes {llvm.emit_c_interface}
// CHECK: %[[WIN:.*]] = memref.alloc(%[[B]]) : memref<?x3xf32>
//   w starts at 16 steps, or at the steps an earlier call grew it to (its
//   bytes per step, 4 * B, tell the runtime whether they fit the limit).
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[STEP:.*]] = arith.muli %[[C4]], %[[B]] : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[CAP:.*]] = call @pdg_g_grow_start(%[[C0]], %[[C16]], %[[STEP]]) : (index, index, index) -> index
// CHECK: %[[W:.*]] = memref.alloc(%[[B]], %[[CAP]]) : memref<?x?x1xf32>
// CHECK: %[[ALIVE:.*]] = memref.alloc(%[[B]]) : memref<?xi8>
// CHECK: %[[LENGTHS:.*]] = memref.alloc(%[[B]]) : memref<?xi64>
// CHECK: %[[LIVE:.*]] = memref.alloca() : memref<index>
//   The scratch of wrapped windows: one per thread of the pool.
// CHECK: %[[THREADS:.*]] = call @pdg_thread_slots() : () -> index
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%[[THREADS]]) : memref<?x3xf32>
//   The stores exist (an allocation that fails from here cannot be skipped);
//   what runs outside the loop runs only while no stop was asked for.
// CHECK: memref.get_global @pdg_running
// CHECK: memref.get_global @pdg_abort
// CHECK: scf.if
// CHECK:   linalg.fill ins(%{{.*}} : i8) outs(%[[ALIVE]] : memref<?xi8>)
// CHECK: %[[LOOP:.*]]:2 = scf.while (%[[T0:.*]] = %{{.*}}, %[[G0:.*]] = %[[W]])
// CHECK:   memref.load %[[LIVE]][]
//   A stop (a failed udf, a bad index, memory, SIGINT) ends the loop.
// CHECK:   memref.get_global @pdg_abort
// CHECK:   arith.andi
// CHECK:   scf.condition
// CHECK: } do {
// CHECK: ^bb0(%[[T:.*]]: index, %[[G:.*]]: memref<?x?x1xf32>):
//   When full, the growable store grows by an eighth (at least 16 steps, at
//   most to the dim's max, 40) in place, through the support code.
// CHECK:   %[[CAP:.*]] = memref.dim %[[G]], %{{.*}} : memref<?x?x1xf32>
// CHECK:   %[[FULL:.*]] = arith.cmpi eq, %[[T]], %[[CAP]] : index
// CHECK:   %[[GROWN:.*]] = scf.if %[[FULL]] -> (memref<?x?x1xf32>) {
// CHECK:     arith.divui %[[CAP]]
// CHECK:     arith.minsi
// CHECK:     func.call @pdg_g_grow_0(%[[G]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x?x1xf32>, index, index, index, index) -> memref<?x?x1xf32>
//   A store that could not grow stops the run before the step writes it.
// CHECK:   memref.get_global @pdg_abort
// CHECK:   %[[KEPT:.*]] = scf.if %{{.*}} -> (memref<?x?x1xf32>) {
//   x (case t == 0, then case t >= 1), w and stop, only for live sequences,
//   the sequences in parallel: one loop for the three, as each reads the
//   others at its own b only.
// CHECK:   scf.parallel (%[[SEQ:.*]]) = (%{{.*}}) to (%[[B]]) step (%{{.*}}) {
// CHECK:     memref.load %[[ALIVE]][%[[SEQ]]] : memref<?xi8>
// CHECK:     func.call @g_x_0_into(
// CHECK:     } else {
// CHECK:     func.call @g_x_1_into(
// CHECK-NOT: scf.reduce
//   w reads x[b, max(0, t - 2) : t + 1] through the window function below
//   (one per kind of window, whoever reads it), given the store, the
//   threads' scratch, b, the window's start and its length.
// CHECK:   %[[LO:.*]] = affine.max
// CHECK:   %[[N:.*]] = arith.subi %{{.*}}, %[[LO]] : index
// CHECK:   func.call @pdg_g_window_0(%[[WIN]], %[[SCRATCH]], %{{.*}}, %[[LO]], %[[N]]) : (memref<?x3xf32>, memref<?x3xf32>, index, index, index) -> memref<?xf32, strided<[?], offset: ?>>
// CHECK-NOT: linalg.copy
// CHECK:   memref.subview %[[GROWN]][%[[SEQ2:.*]], %[[T]], %{{.*}}] [1, 1, 1]
// CHECK:   func.call @g_w_0_into(
// CHECK-NOT: scf.reduce
// CHECK:   func.call @g_stop_0_into(
// CHECK:   scf.reduce
//   After the step: a live sequence whose stop holds, or at step 40, ends.
// CHECK:   arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK:   arith.ori
// CHECK:   memref.store %{{.*}}, %[[LENGTHS]]
// CHECK:   scf.yield %[[GROWN]] : memref<?x?x1xf32>
// CHECK:   } else {
// CHECK:   scf.yield %{{.*}}, %[[KEPT]] : index, memref<?x?x1xf32>
// CHECK: memref.dealloc %[[WIN]]
// CHECK: return %[[LOOP]]#1, %[[LENGTHS]] : memref<?x?x1xf32>, memref<?xi64>
//   The window: a view when it does not wrap past the end of the store,
//   else its two pieces copied into this thread's scratch.
// CHECK: func.func private @pdg_g_window_0(%[[BUF:.*]]: memref<?x3xf32>, %[[SLOTS:.*]]: memref<?x3xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) -> memref<?xf32, strided<[?], offset: ?>> attributes {passthrough = ["noinline"]}
// CHECK:   scf.if %{{.*}} -> (memref<?xf32, strided<[?], offset: ?>>) {
// CHECK:     memref.subview %[[BUF]]
// CHECK:   } else {
// CHECK:     %[[ME:.*]] = func.call @pdg_thread_index() : () -> index
// CHECK:     memref.subview %[[SLOTS]][%[[ME]], %{{.*}}] [1, 3] [1, 1]
// CHECK:     linalg.copy
// CHECK:     linalg.copy
// CHECK:   }
// CHECK: func.func private @pdg_g_grow_start(index, index, index) -> index
// CHECK: func.func private @pdg_g_grow_0(memref<?x?x1xf32>, index, index, index, index) -> memref<?x?x1xf32> attributes {llvm.emit_c_interface}
// CHECK: memref.global @pdg_abort : memref<i8>
// CHECK: memref.global @pdg_running : memref<i8>
// CHECK: memref.global @pdg_step : memref<i64>
// CHECK: func.func private @pdg_thread_index() -> index
// CHECK: func.func private @pdg_thread_slots() -> index
pdg.graph @g {
  pdg.dim @b < launch B max 4
  pdg.dim @t < dynamic T max 40 until %stop : !pdg.value<[b, t], tensor<i1>>
  %x0 = pdg.input "x0" : !pdg.value<[b], tensor<f32>>
  %x = pdg.node "x" [b, t] -> tensor<f32>
    case (t == 0) (%a = %x0[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      %c = arith.constant dense<1.5> : tensor<f32>
      %s = arith.addf %p, %c : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  %w = pdg.node "w" [b, t] (%r = %x[b, max(0, t - 2) : t + 1] : !pdg.value<[b, t], tensor<f32>>) -> tensor<1xf32> {
    %e = tensor.empty() : tensor<1xf32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %r, %c0 : tensor<?xf32>
    %m = tensor.expand_shape %r [[0, 1]] output_shape [1, %n] : tensor<?xf32> into tensor<1x?xf32>
    %red = linalg.reduce ins(%m : tensor<1x?xf32>) outs(%f : tensor<1xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %y = arith.addf %in, %acc : f32
        linalg.yield %y : f32
      }
    pdg.yield %red : tensor<1xf32>
  }
  %stop = pdg.node "stop" [b, t] (%v = %x[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<i1> {
    %lim = arith.constant dense<10.0> : tensor<f32>
    %s = arith.cmpf oge, %v, %lim : tensor<f32>
    pdg.yield %s : tensor<i1>
  }
  pdg.output "w" %w : !pdg.value<[b, t], tensor<1xf32>>
}
