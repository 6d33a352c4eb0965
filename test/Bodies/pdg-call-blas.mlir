// pdg-call-blas: a large f32 product on buffers becomes a call of the C
// runtime's pdg_blas_sgemm (OpenBLAS's sgemm), guarded by its size at run
// time; when the call is not made, or declined, the op runs as it was.
// RUN: pdg-opt %s --split-input-file --pdg-call-blas | FileCheck %s
// A higher threshold: the static products below it are left alone.
// RUN: pdg-opt %s --split-input-file --pdg-call-blas=min-flops=1000000000 | FileCheck %s --check-prefix=HIGH

// A batch of rows times a weight matrix: m (dynamic), n = 3072, k = 768.
// The sizes and each operand's strides come from its metadata; the call is
// made when m * n * k >= 2^17 and m, n >= 2 (the defaults), and the op
// runs unless it was made.
// CHECK-LABEL: func.func @rows_times_weights(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x768xf32>, %[[W:[^:]*]]: memref<768x3072xf32>, %[[Y:[^:]*]]: memref<?x3072xf32>)
// CHECK-DAG: %[[XM:.*]], %[[XO:.*]], %{{.*}}:2, %[[XS:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK-DAG: %[[WM:.*]], %[[WO:.*]], %{{.*}}:2, %[[WS:.*]]:2 = memref.extract_strided_metadata %[[W]]
// CHECK-DAG: %[[YM:.*]], %[[YO:.*]], %{{.*}}:2, %[[YS:.*]]:2 = memref.extract_strided_metadata %[[Y]]
// CHECK: %[[BIG:.*]] = arith.cmpi uge, %{{.*}}, %c131072
// CHECK: %[[DONE:.*]] = scf.if %{{.*}} -> (i1) {
// The last argument, 0: C += A B (no fill before the op).
// CHECK:   %[[R:.*]] = func.call @pdg_blas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{(_[0-9]+)?}}) : (i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, i32) -> i32
// CHECK:   arith.cmpi ne, %[[R]], %c0_i32
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   scf.yield %false
// CHECK: }
// CHECK: %[[NOT:.*]] = arith.xori %[[DONE]], %true
// CHECK: scf.if %[[NOT]] {
// CHECK:   linalg.generic
// CHECK-SAME: ins(%[[X]], %[[W]] :
// CHECK: }
// CHECK-NOT: linalg.generic
// CHECK: func.func private @pdg_blas_sgemm(i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, i32) -> i32
// HIGH-LABEL: func.func @rows_times_weights(
// HIGH: func.call @pdg_blas_sgemm
func.func @rows_times_weights(%x: memref<?x768xf32>, %w: memref<768x3072xf32>, %y: memref<?x3072xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<?x768xf32>, memref<768x3072xf32>) outs(%y : memref<?x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batched product (heads): the batch loop h, read by A, B and C, is a
// loop of calls whose offsets move by each operand's stride along h; `done`
// is carried through it. The two summed loops (i, j) form k: consecutive in
// memory in A and B, checked at run time (stride of i == stride of j * 32).
// Each call: m * n * k = 64 * 64 * 1024 = 2^22 multiply-adds.
// CHECK-LABEL: func.func @batched(
// CHECK: scf.if %{{.*}} -> (i1) {
// CHECK:   %{{.*}} = scf.for %[[H:.*]] = %c0{{(_[0-9]+)?}} to %c8{{(_[0-9]+)?}} step %c1{{(_[0-9]+)?}} iter_args(%{{.*}} = %true{{(_[0-9]+)?}}) -> (i1) {
// CHECK:     arith.muli %[[H]]
// CHECK:     func.call @pdg_blas_sgemm
// CHECK:     scf.yield
// CHECK:   }
// CHECK: scf.if
// CHECK:   linalg.generic
// HIGH-LABEL: func.func @batched(
// HIGH-NOT: pdg_blas_sgemm
// HIGH: linalg.generic
func.func @batched(%a: memref<8x64x32x32xf32>, %b: memref<8x32x32x64xf32>, %c: memref<8x64x64xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(h, m, n, i, j) -> (h, m, i, j)>,
                     affine_map<(h, m, n, i, j) -> (h, i, j, n)>,
                     affine_map<(h, m, n, i, j) -> (h, m, n)>],
    iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
  } ins(%a, %b : memref<8x64x32x32xf32>, memref<8x32x32x64xf32>) outs(%c : memref<8x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Negatives: left as they are, and no helper declared.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: pdg_blas_sgemm
// CHECK-NOT: scf.if
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: pdg_blas_sgemm
func.func @left_alone(%x: memref<1x768xf32>, %w: memref<768x3072xf32>, %y: memref<1x3072xf32>,
                      %s: memref<32x32xf32>, %so: memref<32x32xf32>, %d: memref<256x256xf64>,
                      %v: memref<256xf32>, %xs: memref<256x256xf32>, %ys: memref<256x256xf32>,
                      %t: memref<256x256xf32>) {
  // Too small: 32 x 32 x 32 multiply-adds, below 2^17.
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%s, %s : memref<32x32xf32>, memref<32x32xf32>) outs(%so : memref<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  // Large, but one row (a matrix-vector product): below min-dim (2).
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<1x768xf32>, memref<768x3072xf32>) outs(%y : memref<1x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  // Not a multiply-add: a - b summed.
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%xs, %ys : memref<256x256xf32>, memref<256x256xf32>) outs(%t : memref<256x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.subf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  // f64: sgemm is f32 only.
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%d, %d : memref<256x256xf64>, memref<256x256xf64>) outs(%d : memref<256x256xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  }
  // A sum over one factor only (k not read by B): not a product.
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%xs, %v : memref<256x256xf32>, memref<256xf32>) outs(%t : memref<256x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  // The output is also an input (C += C * B): sgemm's operands may not
  // alias its output.
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%t, %ys : memref<256x256xf32>, memref<256x256xf32>) outs(%t : memref<256x256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A named product (linalg.matmul) is generalized first, then called.
// CHECK-LABEL: func.func @named(
// CHECK-NOT: linalg.matmul
// CHECK: func.call @pdg_blas_sgemm
// CHECK: linalg.generic
func.func @named(%a: memref<64x300xf32>, %b: memref<300x1000xf32>, %c: memref<64x1000xf32>) {
  linalg.matmul ins(%a, %b : memref<64x300xf32>, memref<300x1000xf32>) outs(%c : memref<64x1000xf32>)
  return
}

// -----

// A body that subtracts before it adds is not a product: left alone (it
// used to hit an assertion, dyn_cast of the missing multiply's next op).
// CHECK-LABEL: func.func @not_a_product(
// CHECK-NOT: vector.
// CHECK-NOT: func.call
// CHECK: arith.subf
func.func @not_a_product(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// bf16 weights (widened in the body) are not sgemm's: left alone, for the
// register micro-kernel.
// CHECK-LABEL: func.func @bf16_weights(
// CHECK-NOT: pdg_blas_sgemm
// CHECK: arith.extf
func.func @bf16_weights(%x: memref<64x768xf32>, %w: memref<768x3072xbf16>, %y: memref<64x3072xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<64x768xf32>, memref<768x3072xbf16>) outs(%y : memref<64x3072xf32>) {
  ^bb0(%a: f32, %b: bf16, %o: f32):
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %bf : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A fill of zeros into the output right before the product: the call
// overwrites C (its last argument 1: sgemm's beta = 0), and the fill runs
// only where the op does, just before it.
// CHECK-LABEL: func.func @zeros_then_product(
// CHECK-SAME: %[[X:[^:]*]]: memref<32x768xf32>, %[[W:[^:]*]]: memref<768x3072xf32>, %[[Y:[^:]*]]: memref<32x3072xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NOT: linalg.fill
// CHECK: func.call @pdg_blas_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]])
// CHECK: scf.if
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[Y]] : memref<32x3072xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[W]] :
// CHECK-SAME: outs(%[[Y]] :
func.func @zeros_then_product(%x: memref<32x768xf32>, %w: memref<768x3072xf32>, %y: memref<32x3072xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<32x3072xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x3072xf32>) outs(%y : memref<32x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Fills the call must not drop: of another value than +0.0 (the product
// adds to it), of -0.0, of another buffer, and one with an op between it
// and the product. Each stays where it was, and each call adds (0).
// CHECK-LABEL: func.func @fills_kept(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Y:[^ ]*]] :
// CHECK: func.call @pdg_blas_sgemm({{.*}}, %c0_i32{{(_[0-9]+)?}})
// CHECK: scf.if
// CHECK-NEXT: linalg.generic
// CHECK: linalg.fill
// CHECK: func.call @pdg_blas_sgemm({{.*}}, %c0_i32{{(_[0-9]+)?}})
// CHECK: scf.if
// CHECK-NEXT: linalg.generic
// CHECK: linalg.fill
// CHECK: func.call @pdg_blas_sgemm({{.*}}, %c0_i32{{(_[0-9]+)?}})
// CHECK: scf.if
// CHECK-NEXT: linalg.generic
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: func.call @pdg_blas_sgemm({{.*}}, %c0_i32{{(_[0-9]+)?}})
// CHECK: scf.if
// CHECK-NEXT: linalg.generic
func.func @fills_kept(%x: memref<32x768xf32>, %w: memref<768x3072xf32>, %y: memref<32x3072xf32>,
                      %other: memref<32x3072xf32>) {
  %one = arith.constant 1.0 : f32
  %negzero = arith.constant -0.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%one : f32) outs(%y : memref<32x3072xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x3072xf32>) outs(%y : memref<32x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%negzero : f32) outs(%y : memref<32x3072xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x3072xf32>) outs(%y : memref<32x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%other : memref<32x3072xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x3072xf32>) outs(%y : memref<32x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%y : memref<32x3072xf32>)
  memref.copy %other, %y : memref<32x3072xf32> to memref<32x3072xf32>
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x3072xf32>) outs(%y : memref<32x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
