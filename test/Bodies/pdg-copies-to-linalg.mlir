// pdg-copies-to-linalg: memref.copy becomes linalg.copy, so that no call to
// MLIR's runner library (memrefCopy) is left for strided views.
// RUN: pdg-opt %s --pdg-copies-to-linalg | FileCheck %s
// RUN: pdg-opt %s --pass-pipeline="builtin.module(pdg-copies-to-linalg,func.func(convert-linalg-to-loops))" | FileCheck %s --check-prefix=LOOPS

// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[A:.*]]: memref<4x?xf32, strided<[?, ?], offset: ?>>, %[[B:.*]]: memref<4x?xf32>)
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%[[A]] : memref<4x?xf32, strided<[?, ?], offset: ?>>) outs(%[[B]] : memref<4x?xf32>)
// LOOPS-LABEL: func.func @strided
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: memref.load
// LOOPS: memref.store
func.func @strided(%a: memref<4x?xf32, strided<[?, ?], offset: ?>>, %b: memref<4x?xf32>) {
  memref.copy %a, %b : memref<4x?xf32, strided<[?, ?], offset: ?>> to memref<4x?xf32>
  return
}
