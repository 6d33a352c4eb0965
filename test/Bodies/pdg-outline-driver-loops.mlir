// pdg-outline-driver-loops: each outermost scf.parallel of a driver (a
// function without pdg.node), and each outermost scf.for there that calls,
// forks and allocates nothing, becomes a call of a private noinline function
// taking what the loop reads from outside; constants are cloned in, nested
// loops go with their parent, results come back, node bodies keep theirs.
// RUN: pdg-opt %s --pdg-outline-driver-loops | FileCheck %s
// RUN: pdg-opt %s --pdg-outline-driver-loops --convert-scf-to-openmp --pdg-conditional-forks --pdg-inline-alloca-scopes | FileCheck %s --check-prefix=OMP
// RUN: pdg-opt %s "--pass-pipeline=builtin.module(pdg-outline-driver-loops{element-loops=false})" | FileCheck %s --check-prefix=KEEP

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

// Element loops: a fill and a scan that carries a value go into functions
// (named loop_<k>); a loop that calls a function, or allocates, stays.
// CHECK-LABEL: func.func @pdg_elements(
// CHECK-SAME: %[[F:.*]]: memref<?xi8>, %[[N:.*]]: index)
// CHECK: call @loop_0_of_pdg_elements(%[[N]], %[[F]]) : (index, memref<?xi8>) -> ()
// CHECK: %[[C:.*]] = call @loop_1_of_pdg_elements(%[[N]], %[[F]]) : (index, memref<?xi8>) -> i8
// CHECK: scf.for
// CHECK: call @body
// CHECK: scf.for
// CHECK: memref.alloca
// CHECK: return %[[C]]
// CHECK-LABEL: func.func private @loop_0_of_pdg_elements(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: scf.for
// CHECK: memref.store
// CHECK-LABEL: func.func private @loop_1_of_pdg_elements(
// CHECK-SAME: -> i8 attributes {passthrough = ["noinline"]}
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args
// CHECK: return %[[R]] : i8
// KEEP-LABEL: func.func @pdg_elements(
// KEEP-NOT: call @loop_
// KEEP: return
func.func @pdg_elements(%flags: memref<?xi8>, %n: index) -> i8 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i8
  %zero = arith.constant 0 : i8
  %m = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %one, %flags[%i] : memref<?xi8>
  }
  %count = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> i8 {
    %f = memref.load %flags[%i] : memref<?xi8>
    %next = arith.addi %acc, %f : i8
    scf.yield %next : i8
  }
  scf.for %i = %c0 to %n step %c1 {
    func.call @body(%m, %i) : (memref<?xf32>, index) -> ()
  }
  scf.for %i = %c0 to %n step %c1 {
    %scratch = memref.alloca() : memref<i8>
    memref.store %one, %scratch[] : memref<i8>
  }
  memref.dealloc %m : memref<?xf32>
  return %count : i8
}
