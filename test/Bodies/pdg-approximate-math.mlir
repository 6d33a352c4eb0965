// pdg-approximate-math: the math ops named in `ops` become inline
// arithmetic (a range reduction and a polynomial, with explicit fma), on
// scalars and vectors alike; ops not named stay for libm.
// RUN: pdg-opt %s --pdg-approximate-math='ops=exp,log1p' | FileCheck %s
// RUN: pdg-opt %s --pdg-approximate-math | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @scalar(
// CHECK-NOT: math.exp
// CHECK-NOT: math.log1p
// CHECK: math.fma
// CHECK: math.log %
// CHECK: math.sqrt
// NONE-LABEL: func.func @scalar(
// NONE: math.exp
// NONE: math.log1p
func.func @scalar(%x: f32) -> (f32, f32, f32, f32) {
  %e = math.exp %x : f32
  %l = math.log1p %x : f32
  %g = math.log %x : f32
  %s = math.sqrt %x : f32
  return %e, %l, %g, %s : f32, f32, f32, f32
}

// CHECK-LABEL: func.func @vector(
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: return
func.func @vector(%v: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %v : vector<8xf32>
  return %e : vector<8xf32>
}

// Inside a loop over a memref, as the bodies are when the pass runs.
// CHECK-LABEL: func.func @in_loop(
// CHECK: scf.for
// CHECK-NOT: math.exp
// CHECK: memref.store
func.func @in_loop(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %m[%i] : memref<?xf32>
    %e = math.exp %x : f32
    memref.store %e, %m[%i] : memref<?xf32>
  }
  return
}
