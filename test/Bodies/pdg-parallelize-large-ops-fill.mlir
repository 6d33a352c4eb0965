// pdg-parallelize-large-ops with a fill of the op's output right before
// the op (how a product's output starts): cut along a parallel loop, each
// tile fills its own part of the output just before computing it, and no
// whole fill is left before the tiles; cut along the summed loop, or where
// the op reads its own output, the fill stays whole. pdg-call-blas, run
// next, then drops each tile's fill of zeros for sgemm's beta = 0.
// RUN: pdg-opt %s --split-input-file --pdg-parallelize-large-ops="tiles-in-loop=8 blas-tiles=2 blas-min-flops=131072 blas-min-dim=9" | FileCheck %s
// RUN: pdg-opt %s --split-input-file --pdg-parallelize-large-ops="tiles-in-loop=8 blas-tiles=2 blas-min-flops=131072 blas-min-dim=9" --pdg-call-blas | FileCheck %s --check-prefix=BLAS

// 32 rows by a 768 x 3072 weight, computed once, into zeros: two tiles of
// 1536 columns, each filling its 32 x 1536 part of y, then computing it.
// With pdg-call-blas each tile's call overwrites its part (last argument
// 1), and the tile's fill runs only where the call is not made.
// CHECK-LABEL: func.func @zeros_then_product(
// CHECK-SAME: %[[X:[^:]*]]: memref<32x768xf32>, %[[W:[^:]*]]: memref<768x3072xf32>, %[[Y:[^:]*]]: memref<32x3072xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c1536{{(_[0-9]+)?}}) {
// CHECK:   %[[YT:.*]] = memref.subview %[[Y]][0, %{{.*}}] [32, 1536] [1, 1]
// CHECK:   linalg.fill ins(%[[ZERO]] : f32) outs(%[[YT]] : memref<32x1536xf32, strided<[3072, 1], offset: ?>>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%[[YT]] :
// CHECK:   scf.reduce
// CHECK-NOT: linalg.fill
// CHECK: return
// BLAS-LABEL: func.func @zeros_then_product(
// BLAS-NOT: linalg.fill
// BLAS: scf.parallel
// BLAS-NOT: linalg.fill
// BLAS: func.call @pdg_blas_sgemm({{.*}}, %c1_i32{{(_[0-9]+)?}})
// BLAS: scf.if
// BLAS-NEXT: linalg.fill
// BLAS-NEXT: linalg.generic
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

// In a body of the driver's loop: the fill goes with the op into both
// branches of the runtime's choice, into each tile where it splits and
// whole before the whole op where it does not.
// CHECK-LABEL: func.func @in_loop(
// CHECK-SAME: %[[X:[^:]*]]: memref<32x768xf32>, %[[W:[^:]*]]: memref<768x768xf32>, %[[Y:[^:]*]]: memref<32x768xf32>)
// CHECK-NOT: linalg.fill
// CHECK: call @pdg_ops_split() : () -> i32
// CHECK: scf.if
// CHECK:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%c768{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}}) {
// CHECK:     %[[YT:.*]] = memref.subview %[[Y]]
// CHECK:     linalg.fill ins(%{{.*}} : f32) outs(%[[YT]] :
// CHECK-NEXT: linalg.generic
// CHECK: } else {
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<32x768xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%[[Y]] :
func.func @in_loop(%x: memref<32x768xf32>, %w: memref<768x768xf32>, %y: memref<32x768xf32>) attributes {pdg.in_parallel_loop} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<32x768xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x768xf32>) outs(%y : memref<32x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Any fill goes with its op, not only zeros: a row maximum from -inf over
// 1024 x 1024, cut along its rows, each tile filling its rows of m.
// CHECK-LABEL: func.func @max_from_minus_infinity(
// CHECK-SAME: %[[A:[^:]*]]: memref<1024x1024xf32>, %[[M:[^:]*]]: memref<1024xf32>)
// CHECK: %[[INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel
// CHECK:   %[[MT:.*]] = memref.subview %[[M]]
// CHECK:   linalg.fill ins(%[[INF]] : f32) outs(%[[MT]] :
// CHECK-NEXT: linalg.generic
// BLAS-LABEL: func.func @max_from_minus_infinity(
// BLAS-NOT: pdg_blas_sgemm
func.func @max_from_minus_infinity(%a: memref<1024x1024xf32>, %m: memref<1024xf32>) {
  %inf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%inf : f32) outs(%m : memref<1024xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%a : memref<1024x1024xf32>) outs(%m : memref<1024xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left whole: a matrix-vector product of decode cut along its summed loop
// (partial outputs), whose fill stays before the partials' tiles (in the
// split branch) and before the whole op (in the other); and an op that
// reads its own output, whose fill stays apart (cut on its own, as any
// large op).
// CHECK-LABEL: func.func @fills_kept_whole(
// CHECK-SAME: %[[X:[^:]*]]: memref<768xf32>, %[[W:[^:]*]]: memref<768x2304xf32>, %[[Y:[^:]*]]: memref<2304xf32>, %[[S:[^:]*]]: memref<1024x1024xf32>)
// CHECK: scf.if
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<2304xf32>)
// CHECK-NEXT: memref.alloc() {alignment = 64 : i64} : memref<8x2304xf32>
// CHECK: } else {
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<2304xf32>)
// CHECK-NEXT: linalg.generic
// CHECK: scf.parallel
// CHECK:   %[[ST:.*]] = memref.subview %[[S]]
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[ST]] :
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @fills_kept_whole(%x: memref<768xf32>, %w: memref<768x2304xf32>, %y: memref<2304xf32>,
                            %s: memref<1024x1024xf32>) attributes {pdg.in_parallel_loop} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2304xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<768xf32>, memref<768x2304xf32>) outs(%y : memref<2304xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %acc, %p : f32
    linalg.yield %q : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<1024x1024xf32>)
  linalg.generic {
    indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
    iterator_types = ["parallel", "parallel"]
  } ins(%s : memref<1024x1024xf32>) outs(%s : memref<1024x1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %v : f32
    linalg.yield %r : f32
  }
  return
}
