// pdg-tile-transposes: a transpose that moves the contiguous dim is copied
// in blocks of `tile` along its two swapped dims (scf.for over subviews);
// a swapped dim of at most `tile` stays whole; transposes that keep the
// last dim last, fit one block, or are on tensors are left alone.
// RUN: pdg-opt %s --pdg-tile-transposes='tile=16' | FileCheck %s
// RUN: pdg-opt %s --pdg-tile-transposes='tile=16' --convert-linalg-to-loops | FileCheck %s --check-prefix=LOOPS

// A weight's W^T: both dims in blocks of 16, the output's rows outer.
// CHECK-LABEL: func.func @weight(
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C768:.*]] = arith.constant 768 : index
// CHECK-DAG: %[[C3072:.*]] = arith.constant 3072 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C768]] step %[[C16]]
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %[[C3072]] step %[[C16]]
// CHECK-NEXT: %[[IN:.*]] = memref.subview %arg0[%[[J]], %[[I]]] [16, 16] [1, 1]
// CHECK-NEXT: %[[OUT:.*]] = memref.subview %arg1[%[[I]], %[[J]]] [16, 16] [1, 1]
// CHECK-NEXT: linalg.transpose ins(%[[IN]] : memref<16x16xf32, strided<[768, 1], offset: ?>>) outs(%[[OUT]] : memref<16x16xf32, strided<[3072, 1], offset: ?>>) permutation = [1, 0]
// LOOPS-LABEL: func.func @weight(
// LOOPS-NOT: linalg.transpose
// LOOPS: memref.load
// LOOPS: memref.store
func.func @weight(%w: memref<3072x768xf32>, %t: memref<768x3072xf32>) {
  linalg.transpose ins(%w : memref<3072x768xf32>) outs(%t : memref<768x3072xf32>) permutation = [1, 0]
  return
}

// Dynamic extents: ragged blocks at the edges.
// CHECK-LABEL: func.func @dynamic(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: affine.min
// CHECK: linalg.transpose ins(%{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>)
func.func @dynamic(%w: memref<?x?xf32>, %t: memref<?x?xf32>) {
  linalg.transpose ins(%w : memref<?x?xf32>) outs(%t : memref<?x?xf32>) permutation = [1, 0]
  return
}

// A thread's tile of 12 output rows (pdg-parallelize-large-ops): the rows
// stay whole, the columns go in blocks.
// CHECK-LABEL: func.func @few_rows(
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: memref.subview %arg0[%[[J]], 0] [16, 12] [1, 1]
// CHECK-NEXT: memref.subview %arg1[0, %[[J]]] [12, 16] [1, 1]
// CHECK-NEXT: linalg.transpose
// CHECK-NOT: scf.for
// CHECK: return
func.func @few_rows(%w: memref<3072x12xf32>, %t: memref<12x3072xf32>) {
  linalg.transpose ins(%w : memref<3072x12xf32>) outs(%t : memref<12x3072xf32>) permutation = [1, 0]
  return
}

// Three dims, the last two swapped: the first stays whole in each block.
// CHECK-LABEL: func.func @batched(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.subview %arg0[0, %{{.*}}, %{{.*}}] [4, %{{.*}}, %{{.*}}]
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1]
func.func @batched(%x: memref<4x100x200xf32>, %y: memref<4x200x100xf32>) {
  linalg.transpose ins(%x : memref<4x100x200xf32>) outs(%y : memref<4x200x100xf32>) permutation = [0, 2, 1]
  return
}

// Left alone: the last dim stays last (heads), one block, tensors.
// CHECK-LABEL: func.func @heads(
// CHECK-NOT: scf.for
// CHECK: linalg.transpose ins(%arg0 : memref<8x12x64xf32>)
func.func @heads(%x: memref<8x12x64xf32>, %y: memref<12x8x64xf32>) {
  linalg.transpose ins(%x : memref<8x12x64xf32>) outs(%y : memref<12x8x64xf32>) permutation = [1, 0, 2]
  return
}

// CHECK-LABEL: func.func @one_block(
// CHECK-NOT: scf.for
// CHECK: linalg.transpose ins(%arg0 : memref<16x12xf32>)
func.func @one_block(%x: memref<16x12xf32>, %y: memref<12x16xf32>) {
  linalg.transpose ins(%x : memref<16x12xf32>) outs(%y : memref<12x16xf32>) permutation = [1, 0]
  return
}

// CHECK-LABEL: func.func @tensors(
// CHECK-NOT: scf.for
// CHECK: linalg.transpose ins(%arg0 : tensor<128x128xf32>)
func.func @tensors(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %e = tensor.empty() : tensor<128x128xf32>
  %t = linalg.transpose ins(%x : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) permutation = [1, 0]
  return %t : tensor<128x128xf32>
}
