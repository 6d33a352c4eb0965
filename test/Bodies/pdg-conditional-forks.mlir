// pdg-conditional-forks: a parallel region whose body reaches another
// parallel region (nested, or in a function it calls, transitively) forks
// only when its loop has at least a point per thread; else it runs on the
// caller and the regions inside it take the pool.
// RUN: pdg-opt %s --split-input-file --convert-scf-to-openmp --pdg-conditional-forks --verify-diagnostics | FileCheck %s

// A body with a split product (its tiles an scf.parallel of their own).
func.func @product(%y: memref<2304xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c2304 = arith.constant 2304 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%j) = (%c0) to (%c2304) step (%c64) {
    memref.store %z, %y[%j] : memref<2304xf32>
    scf.reduce
  }
  return
}
// A body that reaches @product through another call.
func.func @layer(%y: memref<2304xf32>) {
  func.call @product(%y) : (memref<2304xf32>) -> ()
  return
}
// A body without a parallel region.
func.func @leaf(%y: memref<2304xf32>, %i: index) {
  %z = arith.constant 1.0 : f32
  memref.store %z, %y[%i] : memref<2304xf32>
  return
}

// The loop over the sequences (%b of them) calls @layer: it forks when
// b >= pdg_thread_slots(), which the pass declares.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[B:[^:]*]]: index
// CHECK: %[[SPAN:.*]] = arith.subi %[[B]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK: %[[POS:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[POINTS:.*]] = arith.muli %{{.*}}, %[[POS]] : index
// CHECK: %[[THREADS:.*]] = call @pdg_thread_slots() : () -> index
// CHECK: %[[FORK:.*]] = arith.cmpi sge, %[[POINTS]], %[[THREADS]] : index
// CHECK: omp.parallel if(%[[FORK]])
// CHECK: call @layer
// The product's own region, and a loop whose body reaches no region: no
// clause, they always fork.
// CHECK-LABEL: func.func @step_leaf(
// CHECK-NOT: pdg_thread_slots
// CHECK: omp.parallel {
// CHECK: func.func private @pdg_thread_slots() -> index
func.func @step(%y: memref<2304xf32>, %b: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%b) step (%c1) {
    func.call @layer(%y) : (memref<2304xf32>) -> ()
    scf.reduce
  }
  return
}
func.func @step_leaf(%y: memref<2304xf32>, %b: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%b) step (%c1) {
    func.call @leaf(%y, %i) : (memref<2304xf32>, index) -> ()
    scf.reduce
  }
  return
}

// -----

// Two dims (sequences x heads), a region nested in the same function: the
// points are the product of both extents.
func.func private @pdg_thread_slots() -> index
// CHECK-LABEL: func.func @grid(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index
// CHECK: arith.subi %[[B]]
// CHECK: arith.subi %[[H]]
// CHECK: %[[POINTS:.*]] = arith.muli
// CHECK: %[[THREADS:.*]] = call @pdg_thread_slots()
// CHECK: %[[FORK:.*]] = arith.cmpi sge, %[[POINTS]], %[[THREADS]]
// CHECK: omp.parallel if(%[[FORK]])
// CHECK: omp.parallel {
// CHECK-NOT: func.func private @pdg_thread_slots
func.func @grid(%y: memref<?xf32>, %b: index, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%b, %h) step (%c1, %c1) {
    scf.parallel (%k) = (%c0) to (%h) step (%c1) {
      memref.store %z, %y[%k] : memref<?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// The runtime's function declared with another type: refused.
// expected-error @+1 {{@pdg_thread_slots is declared with another type than () -> index}}
func.func private @pdg_thread_slots() -> i32
func.func @nested(%y: memref<?xf32>, %b: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%b) step (%c1) {
    scf.parallel (%k) = (%c0) to (%b) step (%c1) {
      memref.store %z, %y[%k] : memref<?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
