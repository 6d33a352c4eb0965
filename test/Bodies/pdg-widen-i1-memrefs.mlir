// pdg-widen-i1-memrefs: booleans take a byte in memory and stay i1 in
// registers (finalize-memref-to-llvm aborts on i1 memrefs in MLIR 22.1.8).
// RUN: pdg-opt %s --pdg-widen-i1-memrefs | FileCheck %s
// RUN: pdg-opt %s --pdg-widen-i1-memrefs --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: memref.global "private" constant @flags : memref<2xi8> = dense<[1, 0]>
// CHECK-LABEL: func.func @negate(%{{.*}}: memref<4xi8>, %{{.*}}: memref<4xi8>)
// CHECK:   %[[L:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<4xi8>
// CHECK:   %[[N:.*]] = arith.trunci %[[L]] : i8 to i1
// CHECK:   %[[X:.*]] = arith.xori %[[N]], %{{.*}} : i1
// CHECK:   %[[W:.*]] = arith.extui %[[X]] : i1 to i8
// CHECK:   memref.store %[[W]], %{{.*}}[%{{.*}}] : memref<4xi8>
// CHECK:   %{{.*}} = memref.alloc() : memref<4xi8>
// LLVM: llvm.func @negate
// LLVM-NOT: i1>
memref.global "private" constant @flags : memref<2xi1> = dense<[true, false]>
func.func @negate(%in: memref<4xi1>, %out: memref<4xi1>) {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %v = memref.load %in[%c0] : memref<4xi1>
  %n = arith.xori %v, %true : i1
  memref.store %n, %out[%c0] : memref<4xi1>
  %tmp = memref.alloc() : memref<4xi1>
  memref.dealloc %tmp : memref<4xi1>
  return
}
