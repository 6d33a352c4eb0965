// A value read only by its sum over the batch (a weight-sized value per
// example, summed for the step's update) is stored as one partial sum per
// thread: `partial`, extents of 1. Lowered, its points add into the slot of
// the thread running them, and the sum adds the threads' slots up.
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage | FileCheck %s --check-prefix=STORE
// RUN: pdg-opt %s --split-input-file --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

!w = !pdg.value<[i], tensor<4xf32>>
!e = !pdg.value<[i, b], tensor<4xf32>>

// STORE-LABEL: pdg.graph @per_example
// STORE: %e = pdg.node "e" {{.*}}#pdg.store<partial, [1, 1]>
// STORE: %s = pdg.node "s" {{.*}}#pdg.store<window, [2]>

// CHECK-LABEL: func.func @pdg_per_example(
// CHECK: %[[THREADS:.*]] = {{(func\.)?}}call @pdg_thread_slots() : () -> index
// CHECK: %[[PARTIAL:.*]] = memref.alloc(%[[THREADS]]) : memref<?x4xf32>
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%[[THREADS]]) : memref<?x4xf32>
// CHECK: scf.for
// CHECK:   call @per_example_w_1_into(
//   Every thread's sum starts at zero, then the points add into them.
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[PARTIAL]] : memref<?x4xf32>)
// CHECK:   scf.parallel
// CHECK:     %[[T:.*]] = {{(func\.)?}}call @pdg_thread_index() : () -> index
// CHECK:     %[[MINE:.*]] = memref.subview %[[SCRATCH]][%[[T]], %{{.*}}] [1, 4] [1, 1]
// CHECK:     %[[SUM:.*]] = memref.subview %[[PARTIAL]][%[[T]], %{{.*}}] [1, 4] [1, 1]
// CHECK:     %[[DEST:.*]] = memref.cast %[[MINE]]
// CHECK:     func.call @per_example_e_0_into(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DEST]])
// CHECK:     linalg.generic {{.*}} ins(%[[MINE]] : {{.*}}) outs(%[[SUM]] : {{.*}})
// CHECK:       arith.addf
//   s does not run its body: it adds the partials up.
// CHECK-NOT: per_example_s_0_into
// CHECK:   %[[S:.*]] = memref.subview
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[S]] :
// CHECK:   linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[PARTIAL]] : memref<?x4xf32>) outs(%[[S]] :
// CHECK:     arith.addf
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
