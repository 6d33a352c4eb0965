// pdg-conditional-forks: a parallel region whose body reaches another
// parallel region (nested, or in a function it calls, transitively) notes
// its loop's points for the bodies inside (pdg_loop_enter before it,
// pdg_loop_leave after) and forks only from pdg_fork_from() points (a point
// per thread, or enough that the bodies run their ops whole); else it runs
// on the caller and the regions inside it take the pool.
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

// The loop over the sequences (%b of them) calls @layer: it notes b for
// @layer's split product, forks when b >= pdg_fork_from(), and restores
// what it replaced after. The pass declares the runtime's functions.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[B:[^:]*]]: index
// CHECK: %[[SPAN:.*]] = arith.subi %[[B]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : index
// CHECK: %[[POS:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// CHECK: %[[POINTS:.*]] = arith.muli %{{.*}}, %[[POS]] : index
// CHECK: %[[SAVED:.*]] = call @pdg_loop_enter(%[[POINTS]]) : (index) -> index
// CHECK: %[[LEAST:.*]] = call @pdg_fork_from() : () -> index
// CHECK: %[[FORK:.*]] = arith.cmpi sge, %[[POINTS]], %[[LEAST]] : index
// CHECK: omp.parallel if(%[[FORK]])
// CHECK: call @layer
// CHECK: omp.terminator
// CHECK: call @pdg_loop_leave(%[[SAVED]]) : (index) -> ()
// The product's own region, and a loop whose body reaches no region: no
// clause, they always fork, and note nothing.
// CHECK-LABEL: func.func @step_leaf(
// CHECK-NOT: pdg_
// CHECK: omp.parallel {
// CHECK-NOT: pdg_
// CHECK: return
// CHECK-DAG: func.func private @pdg_fork_from() -> index
// CHECK-DAG: func.func private @pdg_loop_enter(index) -> index
// CHECK-DAG: func.func private @pdg_loop_leave(index)
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
// points are the product of both extents. A function the module declares
// already is used, not declared again.
func.func private @pdg_fork_from() -> index
// CHECK-LABEL: func.func @grid(
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index
// CHECK: arith.subi %[[B]]
// CHECK: arith.subi %[[H]]
// CHECK: %[[POINTS:.*]] = arith.muli
// CHECK: call @pdg_loop_enter(%[[POINTS]])
// CHECK: %[[LEAST:.*]] = call @pdg_fork_from()
// CHECK: %[[FORK:.*]] = arith.cmpi sge, %[[POINTS]], %[[LEAST]]
// CHECK: omp.parallel if(%[[FORK]])
// CHECK: omp.parallel {
// CHECK-NOT: func.func private @pdg_fork_from
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
// expected-error @+1 {{@pdg_loop_enter is declared with another type than '(index) -> index'}}
func.func private @pdg_loop_enter(i64) -> i64
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
