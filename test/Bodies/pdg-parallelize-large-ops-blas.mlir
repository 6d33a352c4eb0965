// pdg-parallelize-large-ops with blas-tiles: a product that pdg-call-blas
// (run next, with the same thresholds) turns into sgemm calls is cut into
// at most blas-tiles tiles, each one call, instead of the up to 64 (or
// tiles-in-loop) narrow tiles of any other op. Only f32 products whose
// tiles' sizes are known here and reach blas-min-flops and blas-min-dim;
// the rest are cut as before.
// RUN: pdg-opt %s --pdg-parallelize-large-ops="tiles-in-loop=8 blas-tiles=2 blas-min-flops=131072 blas-min-dim=9" | FileCheck %s
// RUN: pdg-opt %s --pdg-parallelize-large-ops="tiles-in-loop=8 blas-tiles=0" | FileCheck %s --check-prefix=OFF

// 32 rows by a 768 x 3072 weight, computed once: two tiles of 1536
// columns (without blas-tiles: ceil(3072 / 64) = 48, rounded up to 64;
// the partial outputs of a cut along k would be small enough, but a
// product that calls sgemm is cut along n).
// CHECK-LABEL: func.func @once(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c1536{{(_[0-9]+)?}}) {
// CHECK:   linalg.generic
// OFF-LABEL: func.func @once(
// OFF: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c64{{(_[0-9]+)?}}) {
func.func @once(%x: memref<32x768xf32>, %w: memref<768x3072xf32>, %y: memref<32x3072xf32>) {
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

// The same in a body of the driver's loop, a 768 x 768 weight: where the
// runtime says to split, two tiles of 384 columns (tiles-in-loop alone:
// ceil(768 / 8) = 96, rounded up to 128).
// CHECK-LABEL: func.func @in_loop(
// CHECK: %[[SPLIT:.*]] = call @pdg_ops_split() : () -> i32
// CHECK: scf.if
// CHECK:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%c768{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}}) {
// CHECK: } else {
// CHECK-NOT: scf.parallel
// CHECK:   linalg.generic
// OFF-LABEL: func.func @in_loop(
// OFF: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c768{{(_[0-9]+)?}}) step (%c128{{(_[0-9]+)?}}) {
func.func @in_loop(%x: memref<32x768xf32>, %w: memref<768x768xf32>, %y: memref<32x768xf32>) attributes {pdg.in_parallel_loop} {
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

// A product whose weights are read along their rows and whose partial
// outputs would be small (16 rows by a 3072 x 768 weight, MLP's down
// projection) is cut along n too: sgemm reads B well either way, and
// there are no partial outputs to zero and add. (Without blas-tiles it is
// cut along its summed loop, into 8 tiles of 384 rows.)
// CHECK-LABEL: func.func @rows_of_weights(
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c768{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}}) {
// OFF-LABEL: func.func @rows_of_weights(
// OFF: memref.alloc() {alignment = 64 : i64} : memref<8x16x768xf32>
func.func @rows_of_weights(%x: memref<16x3072xf32>, %w: memref<3072x768xf32>, %y: memref<16x768xf32>) attributes {pdg.in_parallel_loop} {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<16x3072xf32>, memref<3072x768xf32>) outs(%y : memref<16x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Not sgemm calls, so cut as before: 8 rows (below blas-min-dim; pdg
// streams the weights, cut along k), bf16 weights (cut along n into
// tiles-in-loop tiles), and rows known only at run time (cut along k where
// the partial outputs fit, checked at run time, else along n).
// CHECK-LABEL: func.func @few_rows(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<8x8x3072xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{(_[0-9]+)?}}) step
func.func @few_rows(%x: memref<8x768xf32>, %w: memref<768x3072xf32>, %y: memref<8x3072xf32>) attributes {pdg.in_parallel_loop} {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<8x768xf32>, memref<768x3072xf32>) outs(%y : memref<8x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// 256 x 16 by 16 x 32, computed once: 131072 multiply-adds in all, but
// its tiles (cut along its rows, the first loop of x, the larger input)
// would be below blas-min-flops, and call no sgemm: 64 tiles of 4 rows.
// CHECK-LABEL: func.func @small_tiles(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c256{{(_[0-9]+)?}}) step (%c4{{(_[0-9]+)?}}) {
func.func @small_tiles(%x: memref<256x16xf32>, %w: memref<16x32xf32>, %y: memref<256x32xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<256x16xf32>, memref<16x32xf32>) outs(%y : memref<256x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @bf16_weights(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}}) {
func.func @bf16_weights(%x: memref<32x768xf32>, %w: memref<768x3072xbf16>, %y: memref<32x3072xf32>) attributes {pdg.in_parallel_loop} {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<32x768xf32>, memref<768x3072xbf16>) outs(%y : memref<32x3072xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %wide = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %wide : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @dynamic_rows(
// CHECK: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<8x?x3072xf32>
// CHECK: } else {
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}}) {
func.func @dynamic_rows(%x: memref<?x768xf32>, %w: memref<768x3072xf32>, %y: memref<?x3072xf32>) attributes {pdg.in_parallel_loop} {
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

// A weight's gradient summed over a number of steps known only at run
// time (counted as 64 here; pdg-call-blas checks the call's size at run
// time): 768 x 768, computed once, cut along its rows (the first loop x
// reads) in two tiles of 384 (without blas-tiles: 64 tiles of 12 rows).
// CHECK-LABEL: func.func @weight_gradient(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c768{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}}) {
// OFF-LABEL: func.func @weight_gradient(
// OFF: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c768{{(_[0-9]+)?}}) step (%c12{{(_[0-9]+)?}}) {
func.func @weight_gradient(%x: memref<?x768xf32>, %g: memref<?x768xf32>, %dw: memref<768x768xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(p, k, n) -> (p, k)>, affine_map<(p, k, n) -> (p, n)>,
                     affine_map<(p, k, n) -> (k, n)>],
    iterator_types = ["reduction", "parallel", "parallel"]
  } ins(%x, %g : memref<?x768xf32>, memref<?x768xf32>) outs(%dw : memref<768x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A named product counts too (pdg-call-blas generalizes it first).
// CHECK-LABEL: func.func @named(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c1536{{(_[0-9]+)?}}) {
// CHECK:   linalg.matmul
func.func @named(%x: memref<32x768xf32>, %w: memref<768x3072xf32>, %y: memref<32x3072xf32>) {
  linalg.matmul ins(%x, %w : memref<32x768xf32>, memref<768x3072xf32>) outs(%y : memref<32x3072xf32>)
  return
}
