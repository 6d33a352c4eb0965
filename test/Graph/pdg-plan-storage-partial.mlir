// A value read only by its sum over the batch (a weight-sized value per
// example, summed for the step's update) is stored as partial sums:
// `partial`, extents of 1. Lowered, the batch is cut into min(B, 16) chunks
// of consecutive examples (never one per thread: the order of the additions
// must not depend on the thread count), each chunk adds its examples in
// order into its own partial sum, and the sum adds the chunks' partials up
// in order.
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage | FileCheck %s --check-prefix=STORE
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

!w = !pdg.value<[i], tensor<4xf32>>
!e = !pdg.value<[i, b], tensor<4xf32>>

// STORE-LABEL: pdg.graph @per_example
// STORE: %e = pdg.node "e" {{.*}}#pdg.store<partial, [1, 1]>
// STORE: %s = pdg.node "s" {{.*}}#pdg.store<window, [2]>

// CHECK-LABEL: func.func @pdg_per_example(
// CHECK-SAME: %{{[^:]*}}: index, %[[B:[^:]*]]: index)
// CHECK: %[[MOST:.*]] = arith.constant 16 : index
// CHECK: %[[CHUNKS:.*]] = arith.minui %[[B]], %[[MOST]] : index
//   The body's scratch: one per thread (a thread runs one point at a time),
//   none when every chunk holds one example (B <= 16).
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[B]], %[[CHUNKS]] : index
// CHECK: %[[THREADS:.*]] = {{(func\.)?}}call @pdg_thread_slots() : () -> index
// CHECK: %[[SLOTS:.*]] = arith.select %[[SEVERAL]], %[[THREADS]], %{{.*}} : index
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%[[SLOTS]]) : memref<?x4xf32>
// CHECK: scf.for
// CHECK:   call @per_example_w_1_into(
//   The chunks' sums live from here to s, which reads them: allocated in
//   the step, freed after s.
// CHECK:   %[[PARTIAL:.*]] = memref.alloc(%[[CHUNKS]]) : memref<?x4xf32>
//   A parallel loop over the chunks.
// CHECK-NOT: linalg.fill
// CHECK:   scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%[[CHUNKS]]) step (%[[ONE:.*]]) {
//   Chunk c: the examples [c * B / chunks, (c + 1) * B / chunks), in order.
// CHECK:     %[[NEXT:.*]] = arith.addi %[[C]], %[[ONE]] : index
// CHECK:     %[[LO_B:.*]] = arith.muli %[[C]], %[[B]] : index
// CHECK:     %[[LO:.*]] = arith.divui %[[LO_B]], %[[CHUNKS]] : index
// CHECK:     %[[HI_B:.*]] = arith.muli %[[NEXT]], %[[B]] : index
// CHECK:     %[[HI:.*]] = arith.divui %[[HI_B]], %[[CHUNKS]] : index
// CHECK:     %[[HELD:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK:     %[[SINGLE:.*]] = arith.cmpi eq, %[[HELD]], %[[ONE]] : index
//   Each chunk zeroes its own sum first, on the thread that runs it.
// CHECK:     %[[OWN:.*]] = memref.subview %[[PARTIAL]][%[[C]], %{{.*}}] [1, 4] [1, 1]
// CHECK:     linalg.fill ins(%{{.*}} : f32) outs(%[[OWN]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK:     scf.for %{{.*}} = %[[LO]] to %[[HI]] step %[[ONE]] {
// CHECK:       %[[SUM:.*]] = memref.subview %[[PARTIAL]][%[[C]], %{{.*}}] [1, 4] [1, 1]
//   A chunk of one example: its body writes the chunk's sum.
// CHECK:       scf.if %[[SINGLE]] {
// CHECK:         %[[INTO:.*]] = memref.cast %[[SUM]]
// CHECK:         func.call @per_example_e_0_into(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[INTO]])
//   Else into this thread's scratch, then added to the chunk's sum.
// CHECK:       } else {
// CHECK:         %[[T:.*]] = {{(func\.)?}}call @pdg_thread_index() : () -> index
// CHECK:         %[[MINE:.*]] = memref.subview %[[SCRATCH]][%[[T]], %{{.*}}] [1, 4] [1, 1]
// CHECK:         %[[DEST:.*]] = memref.cast %[[MINE]]
// CHECK:         func.call @per_example_e_0_into(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DEST]])
// CHECK:         linalg.generic {{.*}} ins(%[[MINE]] : {{.*}}) outs(%[[SUM]] : {{.*}})
// CHECK:           arith.addf
// CHECK:     scf.reduce
//   s does not run its body: it adds the partials up, chunk after chunk.
// CHECK-NOT: per_example_s_0_into
// CHECK:   %[[S:.*]] = memref.subview
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[S]] :
// CHECK:   linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[PARTIAL]] : memref<?x4xf32>) outs(%[[S]] :
// CHECK:     arith.addf
// CHECK:   memref.dealloc %[[PARTIAL]] : memref<?x4xf32>
// CHECK: memref.dealloc %[[SCRATCH]]
pdg.graph @per_example {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<4xf32>>
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<4xf32>>
  %w = pdg.node "w" [i] -> tensor<4xf32>
    case (i == 0) (%v = %w0[] : !pdg.value<[], tensor<4xf32>>) {
      pdg.yield %v : tensor<4xf32>
    }
    case (i >= 1) (%v = %w[i - 1] : !w, %g = %s[i - 1] : !w) {
      %n = arith.subf %v, %g : tensor<4xf32>
      pdg.yield %n : tensor<4xf32>
    }
  %e = pdg.node "e" [i, b] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>, %v = %w[i] : !w) -> tensor<4xf32> {
    %m = arith.mulf %a, %v : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  %s = pdg.node "s" [i] (%a = %e[i, 0 : B] : !e) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  pdg.output "w" %w : !w
}

// -----

!w = !pdg.value<[i], tensor<4xf32>>
!e = !pdg.value<[i, b], tensor<4xf32>>

// Not partial: a value with a second reader (m), and one reduced by a max;
// a sum from a nonzero start (k) is not a plain sum either.
// STORE-LABEL: pdg.graph @not_sums
// STORE: %e = pdg.node "e" {{.*}}#pdg.store<point, [1, B]>
// STORE: %f = pdg.node "f" {{.*}}#pdg.store<point, [1, B]>
// STORE: %g = pdg.node "g" {{.*}}#pdg.store<point, [1, B]>
pdg.graph @not_sums {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<4xf32>>
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<4xf32>>
  %w = pdg.node "w" [i] -> tensor<4xf32>
    case (i == 0) (%v = %w0[] : !pdg.value<[], tensor<4xf32>>) {
      pdg.yield %v : tensor<4xf32>
    }
    case (i >= 1) (%v = %w[i - 1] : !w, %g = %s[i - 1] : !w, %h = %m[i - 1] : !w, %j = %k[i - 1] : !w) {
      %n = arith.subf %v, %g : tensor<4xf32>
      %o = arith.subf %n, %h : tensor<4xf32>
      %p = arith.subf %o, %j : tensor<4xf32>
      pdg.yield %p : tensor<4xf32>
    }
  %e = pdg.node "e" [i, b] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>, %v = %w[i] : !w) -> tensor<4xf32> {
    %m = arith.mulf %a, %v : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  %f = pdg.node "f" [i, b] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>, %v = %w[i] : !w) -> tensor<4xf32> {
    %m = arith.addf %a, %v : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  %g = pdg.node "g" [i, b] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>, %v = %w[i] : !w) -> tensor<4xf32> {
    %m = arith.subf %a, %v : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  %s = pdg.node "s" [i] (%a = %e[i, 0 : B] : !e) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  %m = pdg.node "m" [i] (%a = %e[i, 0 : B] : !e, %c = %f[i, 0 : B] : !e) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%c : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.maximumf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  %k = pdg.node "k" [i] (%a = %g[i, 0 : B] : !e) -> tensor<4xf32> {
    %one = arith.constant 1.0 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%one : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  pdg.output "w" %w : !w
}

// -----

!w = !pdg.value<[i], tensor<4xf32>>
!e = !pdg.value<[i, p, g], tensor<4xf32>>

// Summed over two dims (a prompt's group of 3 completions, P prompts): the
// chunks cut the P * 3 points in row-major order, and each point's (p, g)
// comes back from its position.
// STORE-LABEL: pdg.graph @per_completion
// STORE: %e = pdg.node "e" {{.*}}#pdg.store<partial, [1, 1, 1]>

// CHECK-LABEL: func.func @pdg_per_completion(
// CHECK-SAME: %{{[^:]*}}: index, %[[P:[^:]*]]: index)
// CHECK: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: %[[POINTS:.*]] = arith.muli %[[P]], %[[THREE]] : index
// CHECK: %[[CHUNKS:.*]] = arith.minui %[[POINTS]], %{{.*}} : index
// CHECK: %[[PARTIAL:.*]] = memref.alloc(%[[CHUNKS]]) : memref<?x4xf32>
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK:   scf.for %[[AT:.*]] = %{{.*}} to %{{.*}} step
// CHECK:     %[[G:.*]] = arith.remui %[[AT]], %[[G3:.*]] : index
// CHECK:     %[[PP:.*]] = arith.divui %[[AT]], %[[G3]] : index
// CHECK:     func.call @per_completion_e_0_into(%{{.*}}, %{{.*}}, %{{.*}}, %[[PP]], %[[G]], %{{.*}})
// CHECK:   scf.reduce
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[PARTIAL]] : memref<?x4xf32>)
pdg.graph @per_completion {
  pdg.dim @i < launch I
  pdg.dim @p < launch P
  pdg.dim @g < 3
  %x = pdg.input "x" : !pdg.value<[p, g], tensor<4xf32>>
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<4xf32>>
  %w = pdg.node "w" [i] -> tensor<4xf32>
    case (i == 0) (%v = %w0[] : !pdg.value<[], tensor<4xf32>>) {
      pdg.yield %v : tensor<4xf32>
    }
    case (i >= 1) (%v = %w[i - 1] : !w, %s1 = %s[i - 1] : !w) {
      %n = arith.subf %v, %s1 : tensor<4xf32>
      pdg.yield %n : tensor<4xf32>
    }
  %e = pdg.node "e" [i, p, g] (%a = %x[p, g] : !pdg.value<[p, g], tensor<4xf32>>, %v = %w[i] : !w) -> tensor<4xf32> {
    %m = arith.mulf %a, %v : tensor<4xf32>
    pdg.yield %m : tensor<4xf32>
  }
  %s = pdg.node "s" [i] (%a = %e[i, 0 : P, 0 : 3] : !e) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>], iterator_types = ["reduction", "reduction", "parallel"]} ins(%a : tensor<?x3x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  pdg.output "w" %w : !w
}
