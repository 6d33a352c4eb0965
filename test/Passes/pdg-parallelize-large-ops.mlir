// pdg-parallelize-large-ops: a large linalg op on buffers becomes one tile
// per thread of the pool (@pdg_thread_slots) along its first parallel loop.
// RUN: pdg-opt %s --pdg-parallelize-large-ops | FileCheck %s
// RUN: pdg-opt %s --pdg-parallelize-large-ops=min-work=1000000000 | FileCheck %s --check-prefix=HIGH
// Through the lowering's body pipeline, whose pdg-interchange-reductions
// aborted on these ops on buffers (a reduction first moves outside).
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s --check-prefix=LOWERED
// LOWERED-LABEL: func.func @weight_gradient(
// LOWERED: iterator_types = ["parallel", "reduction", "parallel"]
// LOWERED-LABEL: func.func @total(
// LOWERED: iterator_types = ["reduction"]

// A weight's gradient, summed over a dynamic number of points (the
// reduction, first) into 128 x 64: split along its rows, the first parallel
// loop; the tile is ceil(128 / threads), at least 1.
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x128xf32>, %[[G:[^:]*]]: memref<?x64xf32>, %[[DW:[^:]*]]: memref<128x64xf32>)
// CHECK: %[[ROWS:.*]] = arith.constant 128 : index
// CHECK: %[[THREADS:.*]] = call @pdg_thread_slots() : () -> index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[CEIL:.*]] = arith.ceildivui %[[ROWS]], %[[THREADS]] : index
// CHECK: %[[TILE:.*]] = arith.maxui %[[CEIL]], %[[ONE]] : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%[[TILE]]) {
// CHECK:   %[[N:.*]] = affine.min
// CHECK:   %[[XT:.*]] = memref.subview %[[X]][0, %[[I]]] [%{{.*}}, %[[N]]] [1, 1]
// CHECK:   %[[DWT:.*]] = memref.subview %[[DW]][%[[I]], 0] [%{{.*}}, 64] [1, 1]
// CHECK:   linalg.generic
// CHECK-SAME: ins(%[[XT]], %[[G]] :
// CHECK-SAME: outs(%[[DWT]] :
// CHECK:   scf.reduce
// HIGH-LABEL: func.func @weight_gradient(
// HIGH-NOT: scf.parallel
// HIGH: linalg.generic
func.func @weight_gradient(%x: memref<?x128xf32>, %g: memref<?x64xf32>, %dw: memref<128x64xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(p, k, n) -> (p, k)>, affine_map<(p, k, n) -> (p, n)>,
                     affine_map<(p, k, n) -> (k, n)>],
    iterator_types = ["reduction", "parallel", "parallel"]
  } ins(%x, %g : memref<?x128xf32>, memref<?x64xf32>) outs(%dw : memref<128x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Below the threshold (64 K points by default): whole.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @small(%a: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.copy ins(%a : memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// A dynamic extent: the tile comes from memref.dim.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x1024xf32>
// CHECK: %[[D:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x1024xf32>
// CHECK: %[[T:.*]] = call @pdg_thread_slots()
// CHECK: arith.ceildivui %[[D]], %[[T]]
// CHECK: scf.parallel
// CHECK: linalg.copy
func.func @dynamic_rows(%a: memref<?x1024xf32>, %c: memref<?x1024xf32>) {
  linalg.copy ins(%a : memref<?x1024xf32>) outs(%c : memref<?x1024xf32>)
  return
}

// Already parallel: a body the driver calls inside its parallel loops, or
// an op inside an scf.parallel. Whole.
// CHECK-LABEL: func.func @called_in_parallel(
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @called_in_parallel(%a: memref<512x512xf32>, %c: memref<512x512xf32>) attributes {pdg.in_parallel_loop} {
  linalg.copy ins(%a : memref<512x512xf32>) outs(%c : memref<512x512xf32>)
  return
}
// CHECK-LABEL: func.func @inside_parallel(
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @inside_parallel(%a: memref<4x512x512xf32>, %c: memref<4x512x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %ai = memref.subview %a[%i, 0, 0] [1, 512, 512] [1, 1, 1] : memref<4x512x512xf32> to memref<512x512xf32, strided<[512, 1], offset: ?>>
    %ci = memref.subview %c[%i, 0, 0] [1, 512, 512] [1, 1, 1] : memref<4x512x512xf32> to memref<512x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%ai : memref<512x512xf32, strided<[512, 1], offset: ?>>) outs(%ci : memref<512x512xf32, strided<[512, 1], offset: ?>>)
    scf.reduce
  }
  return
}

// A sum to a scalar has no parallel loop: whole. So is an op on tensors.
// CHECK-LABEL: func.func @total(
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @total(%a: memref<1048576xf32>, %s: memref<f32>) {
  linalg.generic {
    indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
    iterator_types = ["reduction"]
  } ins(%a : memref<1048576xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}
// CHECK-LABEL: func.func @tensors(
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @tensors(%a: tensor<512x512xf32>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.copy ins(%a : tensor<512x512xf32>) outs(%c : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// Declared once, at the end.
// CHECK: func.func private @pdg_thread_slots() -> index
// CHECK-NOT: @pdg_thread_slots()
