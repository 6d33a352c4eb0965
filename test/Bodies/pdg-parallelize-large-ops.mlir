// pdg-parallelize-large-ops: a large linalg op on buffers becomes tiles
// along a parallel loop (the first that indexes its largest input), run by
// the pool as an scf.parallel (a product of few rows reading its weights
// along their rows: along its summed loop, into partial outputs). The
// tile size depends on the extent alone, never on the thread count:
// ceil(extent / 64), rounded up to a multiple of 4 (64 along the output's
// last dim).
// RUN: pdg-opt %s --pdg-parallelize-large-ops | FileCheck %s
// RUN: pdg-opt %s --pdg-parallelize-large-ops=min-work=1000000000 | FileCheck %s --check-prefix=HIGH
// RUN: pdg-opt %s --pdg-parallelize-large-ops=min-work-in-loop=-1 | FileCheck %s --check-prefix=NESTED-OFF
// RUN: pdg-opt %s --pdg-parallelize-large-ops=tiles-in-loop=2 | FileCheck %s --check-prefix=TWO
// RUN: pdg-opt %s --pdg-parallelize-large-ops=tiles-in-loop=8 | FileCheck %s --check-prefix=EIGHT
// Through the lowering's body pipeline, whose pdg-interchange-reductions
// aborted on these ops on buffers (a reduction first moves outside).
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s --check-prefix=LOWERED
// LOWERED-LABEL: func.func @weight_gradient(
// LOWERED: iterator_types = ["parallel", "reduction", "parallel"]
// LOWERED-LABEL: func.func @total(
// LOWERED: iterator_types = ["reduction"]

// A weight's gradient, summed over a dynamic number of points (the
// reduction, first) into 128 x 64: split along its rows, the first parallel
// loop that x (the largest input: ? x 128 against ? x 64) reads, into 32
// tiles of 4 rows (ceil(128 / 64) = 2, rounded up to 4).
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x128xf32>, %[[G:[^:]*]]: memref<?x64xf32>, %[[DW:[^:]*]]: memref<128x64xf32>)
// CHECK-NOT: pdg_thread_slots
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c128{{(_[0-9]+)?}}) step (%c4{{(_[0-9]+)?}}) {
// CHECK:   %[[XT:.*]] = memref.subview %[[X]][0, %[[I]]] [%{{.*}}, 4] [1, 1]
// CHECK:   %[[DWT:.*]] = memref.subview %[[DW]][%[[I]], 0] [4, 64] [1, 1]
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

// A matrix-vector product split along the output's last dim: tiles of a
// multiple of 64 columns (ceil(5000 / 64) = 79, rounded up to 128), the
// last one shorter. (Cut along its 32 summed rows instead, its 8 tiles of
// 4 rows would need partial outputs of 8 x 5000: more than 1/8 of W.)
// CHECK-LABEL: func.func @columns(
// CHECK-SAME: %[[V:[^:]*]]: memref<32xf32>, %[[W:[^:]*]]: memref<32x5000xf32>, %[[Y:[^:]*]]: memref<5000xf32>)
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%c5000{{(_[0-9]+)?}}) step (%c128{{(_[0-9]+)?}}) {
// CHECK:   %[[N:.*]] = affine.min #{{.*}}(%[[J]])
// CHECK:   memref.subview %[[W]][0, %[[J]]] [32, %[[N]]] [1, 1]
// CHECK:   memref.subview %[[Y]][%[[J]]] [%{{.*}}] [1]
// CHECK:   linalg.generic
// CHECK:   scf.reduce
func.func @columns(%v: memref<32xf32>, %w: memref<32x5000xf32>, %y: memref<5000xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%v, %w : memref<32xf32>, memref<32x5000xf32>) outs(%y : memref<5000xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// A batch of rows (dynamic) times a weight matrix, the largest input, read
// along its rows. Where the rows are few enough that 8 partial outputs
// hold at most 1/8 of W (8 * rows * 3072 <= 768 * 3072 / 8, checked at run
// time: 12 rows at most, decode of a small batch), it is cut along the
// summed loop into 8 tiles of 96 whole rows of W. Else it is cut along
// the weights' columns (ceil(3072 / 64) = 48, rounded up to 64), so that
// each tile reads its own columns of W, not along the rows (the first
// parallel loop), where every tile would read all of W.
// CHECK-LABEL: func.func @rows_times_weights(
// CHECK-SAME: %[[XR:[^:]*]]: memref<?x768xf32>, %[[WR:[^:]*]]: memref<768x3072xf32>, %[[YR:[^:]*]]: memref<?x3072xf32>)
// CHECK: %[[ROWS:.*]] = memref.dim %[[YR]], %c0
// CHECK: %[[EIGHT_ROWS:.*]] = arith.muli %c8, %[[ROWS]]
// CHECK: %[[PARTIAL:.*]] = arith.muli %[[EIGHT_ROWS]], %c3072
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[PARTIAL]], %c294912
// CHECK: scf.if %[[FITS]] {
// CHECK:   %[[P:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<8x?x3072xf32>
// CHECK:   scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c8{{.*}}) step
// CHECK:     memref.subview %[[WR]][%{{.*}}, 0] [%{{.*}}, 3072] [1, 1]
// CHECK:     memref.subview %[[P]][%[[T]], 0, 0] [1, %{{.*}}, 3072] [1, 1, 1]
// CHECK:   ins(%[[P]] : memref<8x?x3072xf32>) outs(%[[YR]] : memref<?x3072xf32>)
// CHECK:   memref.dealloc %[[P]]
// CHECK: } else {
// CHECK: scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c64{{(_[0-9]+)?}}) {
// CHECK:   memref.subview %[[WR]][0, %[[J]]] [768, 64] [1, 1]
// CHECK:   memref.subview %[[YR]][0, %[[J]]] [%{{.*}}, 64] [1, 1]
// CHECK:   linalg.generic
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

// A static extent that one tile holds (4 rows: a tile of 4): whole.
// CHECK-LABEL: func.func @one_tile(
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @one_tile(%a: memref<4x32768xf32>, %c: memref<4x32768xf32>) {
  linalg.copy ins(%a : memref<4x32768xf32>) outs(%c : memref<4x32768xf32>)
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

// A dynamic extent: the tile is computed from memref.dim where the op runs,
// ceil(ceil(rows / 64) / 4) * 4, at least 4.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[A:[^:]*]]: memref<?x1024xf32>
// CHECK: %[[D:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x1024xf32>
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[EACH:.*]] = arith.ceildivui %[[D]], %[[C64]] : index
// CHECK: %[[FOURS:.*]] = arith.ceildivui %[[EACH]], %[[C4]] : index
// CHECK: %[[ALIGNED:.*]] = arith.muli %[[FOURS]], %[[C4]] : index
// CHECK: %[[T:.*]] = arith.maxui %[[ALIGNED]], %[[C4]] : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[T]])
// CHECK: linalg.copy
func.func @dynamic_rows(%a: memref<?x1024xf32>, %c: memref<?x1024xf32>) {
  linalg.copy ins(%a : memref<?x1024xf32>) outs(%c : memref<?x1024xf32>)
  return
}

// A body the driver calls inside its parallel loops: split too, since with
// one point (one sequence) that loop runs on one thread and these tiles
// fork instead (pdg-conditional-forks); but only there: the runtime says
// which (pdg_ops_split, by the loop's points), and with more points the
// copy of the op in the else-block runs whole. A matrix-vector
// product of decode at batch 1 (768 x 2304 weights, read along their
// rows) is cut along its summed loop, into at most 8 tiles of whole rows
// of W (here 96 each), each summing into its own row of partials, which
// are added to y after, in tile order. min-work-in-loop=-1 leaves it whole.
// CHECK-LABEL: func.func @called_in_parallel(
// CHECK-SAME: %[[X:[^:]*]]: memref<768xf32>, %[[W:[^:]*]]: memref<768x2304xf32>, %[[Y:[^:]*]]: memref<2304xf32>)
// CHECK: %[[FLAG:.*]] = call @pdg_ops_split() : () -> i32
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[SPLIT:.*]] = arith.cmpi ne, %[[FLAG]], %[[ZERO]] : i32
// CHECK: scf.if %[[SPLIT]] {
// CHECK:   memref.alloc() {alignment = 64 : i64} : memref<8x2304xf32>
// CHECK:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%c8{{.*}}) step
// CHECK:   memref.subview %{{.*}}[%{{.*}}, 0] [%{{.*}}, 2304] [1, 1]
// CHECK:   linalg.generic
// CHECK: } else {
// CHECK-NOT: scf.parallel
// CHECK:   linalg.generic
// CHECK-SAME: ins(%[[X]], %[[W]] : memref<768xf32>, memref<768x2304xf32>) outs(%[[Y]] : memref<2304xf32>)
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
// With tiles-in-loop=2, two tiles of 384 rows.
// TWO-LABEL: func.func @called_in_parallel(
// TWO-SAME: %[[X:[^:]*]]: memref<768xf32>, %[[W:[^:]*]]: memref<768x2304xf32>, %[[Y:[^:]*]]: memref<2304xf32>)
// TWO: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x2304xf32>
// TWO: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<2x2304xf32>)
// TWO-DAG: %[[C384:.*]] = arith.constant 384 : index
// TWO-DAG: %[[C768:.*]] = arith.constant 768 : index
// TWO-DAG: %[[C2:.*]] = arith.constant 2 : index
// TWO: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C2]]) step (%{{.*}}) {
// TWO:   %[[K0:.*]] = arith.muli %[[T]], %[[C384]]
// TWO:   %[[LEFT:.*]] = arith.subi %[[C768]], %[[K0]]
// TWO:   %[[ROWS:.*]] = arith.minui %[[C384]], %[[LEFT]]
// TWO:   %[[XT:.*]] = memref.subview %[[X]][%[[K0]]] [%[[ROWS]]] [1]
// TWO:   %[[WT:.*]] = memref.subview %[[W]][%[[K0]], 0] [%[[ROWS]], 2304] [1, 1]
// TWO:   %[[PT:.*]] = memref.subview %[[P]][%[[T]], 0] [1, 2304] [1, 1] : memref<2x2304xf32> to memref<2304xf32, strided<[1], offset: ?>>
// TWO:   linalg.generic
// TWO-SAME: ins(%[[XT]], %[[WT]] :
// TWO-SAME: outs(%[[PT]] :
// TWO:   scf.reduce
// TWO: }
// TWO: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%[[P]] : memref<2x2304xf32>) outs(%[[Y]] : memref<2304xf32>)
// TWO:   %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// TWO:   linalg.yield %[[S]]
// TWO: memref.dealloc %[[P]]
// NESTED-OFF-LABEL: func.func @called_in_parallel(
// NESTED-OFF-NOT: scf.parallel
// NESTED-OFF: linalg.generic
func.func @called_in_parallel(%x: memref<768xf32>, %w: memref<768x2304xf32>, %y: memref<2304xf32>) attributes {pdg.in_parallel_loop} {
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<768xf32>, memref<768x2304xf32>) outs(%y : memref<2304xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Decode at batch 1 with bf16 weights, 8 tiles in the driver's loop (what
// pdg.lowering.native asks for): the 768 x 3072 weights read along their
// rows are cut into 8 tiles of 96 whole rows, not into 8 tiles of 384
// columns (rows of 768 bytes each).
// EIGHT-LABEL: func.func @rows_of_bf16_weights(
// EIGHT: memref.alloc() {alignment = 64 : i64} : memref<8x3072xf32>
// EIGHT: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%c8{{(_[0-9]+)?}}) step
// EIGHT:   memref.subview %{{.*}}[%{{.*}}, 0] [%{{.*}}, 3072] [1, 1] : memref<768x3072xbf16> to memref<?x3072xbf16, strided<[3072, 1], offset: ?>>
// EIGHT:   arith.extf
// EIGHT:   scf.reduce
// EIGHT: ins(%{{.*}} : memref<8x3072xf32>) outs(%{{.*}} : memref<3072xf32>)
func.func @rows_of_bf16_weights(%x: memref<768xf32>, %w: memref<768x3072xbf16>, %y: memref<3072xf32>) attributes {pdg.in_parallel_loop} {
  linalg.generic {indexing_maps = [affine_map<(k, n) -> (k)>, affine_map<(k, n) -> (k, n)>, affine_map<(k, n) -> (n)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x, %w : memref<768xf32>, memref<768x3072xbf16>) outs(%y : memref<3072xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Not cut along the summed loop, at 8 tiles too: a table read along its
// rows by the dot form (head[v] = sum_k x[k] * table[v, k], each tile's
// rows already one block), and a product of 16 rows (a batch of tokens),
// whose 8 partial outputs (8 x 16 x 3072) would exceed 1/8 of W; both
// are cut along the output's columns as before.
// EIGHT-LABEL: func.func @dot_form_and_rows(
// EIGHT-NOT: memref.alloc
// EIGHT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c50257{{(_[0-9]+)?}}) step (%c6336{{(_[0-9]+)?}})
// EIGHT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3072{{(_[0-9]+)?}}) step (%c384{{(_[0-9]+)?}})
// EIGHT-NOT: memref.alloc
// EIGHT-LABEL: func.func @inside_parallel(
func.func @dot_form_and_rows(%x: memref<768xf32>, %table: memref<50257x768xbf16>, %logits: memref<50257xf32>,
                             %xs: memref<16x768xf32>, %w: memref<768x3072xf32>, %ys: memref<16x3072xf32>) attributes {pdg.in_parallel_loop} {
  linalg.generic {indexing_maps = [affine_map<(v, k) -> (k)>, affine_map<(v, k) -> (v, k)>, affine_map<(v, k) -> (v)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %table : memref<768xf32>, memref<50257x768xbf16>) outs(%logits : memref<50257xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xs, %w : memref<16x768xf32>, memref<768x3072xf32>) outs(%ys : memref<16x3072xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Already parallel: an op inside an scf.parallel. Whole.
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

// The thread count is never asked for; the runtime's answer, declared once.
// CHECK-NOT: pdg_thread_slots
// CHECK: func.func private @pdg_ops_split() -> i32
// CHECK-NOT: pdg_thread_slots
