// pdg-outline-parallel-loops: each outermost scf.parallel of a driver (a
// function without pdg.node) becomes a call of a private noinline function
// taking what the loop reads from outside; constants are cloned in, nested
// loops go with their parent, results come back, node bodies keep theirs.
// RUN: pdg-opt %s --pdg-outline-parallel-loops | FileCheck %s
// RUN: pdg-opt %s --pdg-outline-parallel-loops --convert-scf-to-openmp --pdg-conditional-forks --pdg-inline-alloca-scopes | FileCheck %s --check-prefix=OMP

func.func private @body(memref<?xf32>, index) attributes {pdg.node = "body"}

// CHECK-LABEL: func.func @pdg_driver(
// CHECK-SAME: %[[M:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: scf.for %[[T:.*]] =
// CHECK-NEXT: call @parallel_0_of_pdg_driver(%[[N]], %[[M]], %[[T]]) : (index, memref<?xf32>, index) -> ()
// CHECK: %[[S:.*]] = call @parallel_1_of_pdg_driver(%[[N]], %[[M]]) : (index, memref<?xf32>) -> f32
// CHECK: return %[[S]]
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func private @parallel_0_of_pdg_driver(
// CHECK-SAME: %[[N0:.*]]: index, %[[M0:.*]]: memref<?xf32>, %[[T0:.*]]: index)
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 1 : index
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: scf.parallel
// CHECK: call @body(%[[M0]], %[[T0]])
// CHECK: return
// CHECK-LABEL: func.func private @parallel_1_of_pdg_driver(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: %[[Z:.*]] = arith.constant 0.0
// CHECK: scf.parallel {{.*}} init (%[[Z]]) -> f32
// CHECK: return
func.func @pdg_driver(%m: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %t = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
        func.call @body(%m, %t) : (memref<?xf32>, index) -> ()
        scf.reduce
      }
      scf.reduce
    }
  }
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %m[%i] : memref<?xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}

// A node's body keeps its loops (the tiles of pdg-parallelize-large-ops).
// CHECK-LABEL: func.func @tiles(
// CHECK: scf.parallel
func.func @tiles(%m: memref<?xf32>, %n: index) attributes {pdg.node = "tiles"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    func.call @body(%m, %i) : (memref<?xf32>, index) -> ()
    scf.reduce
  }
  return
}

// After the OpenMP conversion the driver holds no region; each function has one.
// OMP-LABEL: func.func @pdg_driver(
// OMP-NOT: omp.parallel
// OMP: return
// OMP-LABEL: func.func private @parallel_0_of_pdg_driver(
// OMP: call @pdg_loop_enter
// OMP: omp.parallel if(
// OMP-LABEL: func.func private @parallel_1_of_pdg_driver(
// OMP: omp.parallel
