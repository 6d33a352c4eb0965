// pdg-register-tile-contractions: the full tiles of a contraction's output
// live in vector registers through its summed loops; what is left over, and
// operands whose last stride is not 1 at run time, run the op as it was.
// RUN: pdg-opt %s --split-input-file --pdg-register-tile-contractions | FileCheck %s
// Streaming only from 1 GB of B: every matrix-vector product register-tiled.
// RUN: pdg-opt %s --split-input-file --pdg-register-tile-contractions=stream-min-bytes=1000000000 | FileCheck %s --check-prefix=HIGH

// A weight gradient, dW[k, n] += x[p, k] * g[p, n] summed over p: tiles of
// 4 rows x 2 vectors of 8, 8 accumulators carried through the loop over p.
// 130 rows leave 2; 64 columns leave none (no column part).
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x130xf32, strided<[?, ?], offset: ?>>, %[[G:[^:]*]]: memref<?x64xf32, strided<[?, ?], offset: ?>>, %[[DW:[^:]*]]: memref<130x64xf32, strided<[?, ?], offset: ?>>)
//   Run-time check: g and dW have unit last strides. Their metadata is read
//   once, for the check and for the views with a static unit stride.
// CHECK: %[[GB:.*]], %{{.*}}, %{{.*}}:2, %[[GS:.*]]:2 = memref.extract_strided_metadata %[[G]]
// CHECK: arith.cmpi eq, %[[GS]]#1
// CHECK: %[[DB:.*]], %{{.*}}, %{{.*}}:2, %[[DS:.*]]:2 = memref.extract_strided_metadata %[[DW]]
// CHECK: arith.cmpi eq, %[[DS]]#1
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: scf.if %[[OK]] {
// CHECK-NOT: extract_strided_metadata
// CHECK:   %[[GV:.*]] = memref.reinterpret_cast %[[GB]] {{.*}} to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:   %[[DWV:.*]] = memref.reinterpret_cast %[[DB]] {{.*}} to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:   scf.for %[[M0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     scf.for %[[N0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-8: vector.load %[[DWV]]
// CHECK:       %[[SUMS:.*]]:8 = scf.for %[[P:.*]] = {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-2: vector.load %[[GV]][%[[P]], %{{.*}}] : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// CHECK:         memref.load %[[X]][%[[P]], %{{.*}}]
// CHECK:         vector.broadcast
// CHECK-COUNT-2: vector.fma
// CHECK:         scf.yield
// CHECK-COUNT-8: vector.store %[[SUMS]]#{{.}}, %[[DWV]]
//   The 2 rows left: the op on subviews.
// CHECK:   memref.subview %[[DW]][%{{.*}}, 0] [%{{.*}}, 64] [1, 1]
// CHECK:   linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: } else {
// CHECK:   linalg.generic
// CHECK: }
func.func @weight_gradient(%x: memref<?x130xf32, strided<[?, ?], offset: ?>>, %g: memref<?x64xf32, strided<[?, ?], offset: ?>>, %dw: memref<130x64xf32, strided<[?, ?], offset: ?>>) {
  linalg.generic {
    indexing_maps = [affine_map<(p, k, n) -> (p, k)>, affine_map<(p, k, n) -> (p, n)>,
                     affine_map<(p, k, n) -> (k, n)>],
    iterator_types = ["reduction", "parallel", "parallel"]
  } ins(%x, %g : memref<?x130xf32, strided<[?, ?], offset: ?>>, memref<?x64xf32, strided<[?, ?], offset: ?>>) outs(%dw : memref<130x64xf32, strided<[?, ?], offset: ?>>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matrix-vector product y[n] += x[k] * W[k, n] (no rows): 8 vectors of
// one row; the identity layouts need no run-time test of their strides.
// 100 columns: one tile of 64, 36 left.
// CHECK-LABEL: func.func @matvec(
// CHECK-NOT: arith.cmpi
// CHECK: scf.if
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %{{.*}}:8 = scf.for
// CHECK-COUNT-8: vector.fma
// CHECK: memref.subview %arg2[%{{.*}}] [%{{.*}}] [1]
// CHECK: linalg.generic
func.func @matvec(%x: memref<32xf32>, %w: memref<32x100xf32>, %y: memref<100xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<32xf32>, memref<32x100xf32>) outs(%y : memref<100xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A 32-wide row takes 4 vectors, the whole row: no part left.
// CHECK-LABEL: func.func @narrow_matvec(
// CHECK: %{{.*}}:4 = scf.for
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: linalg.generic
// CHECK: } else {
// CHECK: linalg.generic
func.func @narrow_matvec(%x: memref<32xf32>, %w: memref<32x32xf32>, %y: memref<32xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<32xf32>, memref<32x32xf32>) outs(%y : memref<32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// B read along n but not last (a transposed weight): not a register tile,
// but the dot form (see @tied_logits below). Then contractions neither
// kernel takes, left alone: a body that is not a multiply-add; an output
// that is an input; f64.
// CHECK-LABEL: func.func @transposed(
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.reduction <add>
func.func @transposed(%x: memref<32xf32>, %w: memref<100x32xf32>, %y: memref<100xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (n, k)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<32xf32>, memref<100x32xf32>) outs(%y : memref<100xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @max_of_products(
// CHECK-NOT: vector.fma
// CHECK: linalg.generic
func.func @max_of_products(%x: memref<32xf32>, %w: memref<32x100xf32>, %y: memref<100xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<32xf32>, memref<32x100xf32>) outs(%y : memref<100xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.maximumf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// An output that is also an input: the loops see its updates, the kernel
// would not.
// CHECK-LABEL: func.func @output_is_input(
// CHECK-NOT: vector.fma
// CHECK: linalg.generic
func.func @output_is_input(%x: memref<32xf32>, %y: memref<32x32xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %y : memref<32xf32>, memref<32x32xf32>) outs(%y : memref<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @double(
// CHECK-NOT: vector.fma
// CHECK: linalg.generic
func.func @double(%x: memref<32xf64>, %w: memref<32x100xf64>, %y: memref<100xf64>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<32xf64>, memref<32x100xf64>) outs(%y : memref<100xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %m, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A matrix-vector product whose B holds 512 KiB (at least stream-min-bytes,
// 256 KiB): B is streamed, 4 of its rows per step, each read end to end.
// For each vector of 8 columns: load y, add the 4 rows' products in order
// (one fma each), store y. 250 rows leave 2, added one row per step; 1000
// columns are whole vectors (none left over).
// CHECK-LABEL: func.func @streamed_matvec(
// CHECK-SAME: %[[X:[^:]*]]: memref<250xf32>, %[[W:[^:]*]]: memref<250x1000xf32>, %[[Y:[^:]*]]: memref<1000xf32>)
// CHECK:   scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c4{{(_[0-9]+)?}} {
// CHECK-COUNT-4: memref.load %[[X]]
// CHECK:     scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %c8{{(_[0-9]+)?}} {
// CHECK:       %[[ACC:.*]] = vector.load %{{.*}}[%[[N]]]
// CHECK:       vector.load %{{.*}}[%[[K]], %[[N]]]
// CHECK:       %[[S0:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[ACC]]
// CHECK-COUNT-3: vector.fma
// CHECK:       vector.store
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1{{(_[0-9]+)?}} {
// CHECK:     memref.load %[[X]]
// CHECK:     scf.for %{{.*}} step %c8{{(_[0-9]+)?}} {
// CHECK:       vector.fma
// CHECK-NOT:   vector.fma
// CHECK:       vector.store
// HIGH-LABEL: func.func @streamed_matvec(
// HIGH: %{{.*}}:8 = scf.for
func.func @streamed_matvec(%x: memref<250xf32>, %w: memref<250x1000xf32>, %y: memref<1000xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<250xf32>, memref<250x1000xf32>) outs(%y : memref<1000xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
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

// bf16 weights: B (250 x 1000 bf16, 500 KB: streamed) is loaded 8 lanes of
// bf16 at a time and widened to f32 before its fma; the sums stay f32.
// CHECK-LABEL: func.func @streamed_matvec_bf16(
// CHECK-SAME: %[[X:[^:]*]]: memref<250xf32>, %[[W:[^:]*]]: memref<250x1000xbf16>, %[[Y:[^:]*]]: memref<1000xf32>)
// CHECK:   scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c4{{(_[0-9]+)?}} {
// CHECK:     scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %c8{{(_[0-9]+)?}} {
// CHECK:       %[[ACC:.*]] = vector.load %{{.*}}[%[[N]]] : memref<{{.*}}xf32{{.*}}>, vector<8xf32>
// CHECK:       %[[B:.*]] = vector.load %{{.*}}[%[[K]], %[[N]]] : memref<{{.*}}xbf16{{.*}}>, vector<8xbf16>
// CHECK:       %[[BF:.*]] = arith.extf %[[B]] : vector<8xbf16> to vector<8xf32>
// CHECK:       vector.fma %{{.*}}, %[[BF]], %[[ACC]] : vector<8xf32>
// HIGH-LABEL: func.func @streamed_matvec_bf16(
// HIGH: %{{.*}}:8 = scf.for
// HIGH: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
func.func @streamed_matvec_bf16(%x: memref<250xf32>, %w: memref<250x1000xbf16>, %y: memref<1000xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>,
                     affine_map<(n, k) -> (n)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%x, %w : memref<250xf32>, memref<250x1000xbf16>) outs(%y : memref<1000xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %bf : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bf16 A (a row of a bf16 table) read by the register tile: each element
// is loaded and widened before its broadcast.
// CHECK-LABEL: func.func @tiled_bf16_rows(
// CHECK: %{{.*}}:8 = scf.for
// CHECK:   memref.load %{{.*}} : memref<8x64xbf16>
// CHECK:   arith.extf %{{.*}} : bf16 to f32
// CHECK:   vector.broadcast
func.func @tiled_bf16_rows(%a: memref<8x64xbf16>, %b: memref<64x16xf32>, %c: memref<8x16xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%a, %b : memref<8x64xbf16>, memref<64x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: bf16, %y: f32, %o: f32):
    %xf = arith.extf %x : bf16 to f32
    %m = arith.mulf %xf, %y : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A product into a bf16 output is not one the kernels sum in f32: left alone.
// CHECK-LABEL: func.func @bf16_output(
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @bf16_output(%a: memref<8x64xbf16>, %b: memref<64x16xbf16>, %c: memref<8x16xbf16>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%a, %b : memref<8x64xbf16>, memref<64x16xbf16>) outs(%c : memref<8x16xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %m = arith.mulf %x, %y : bf16
    %r = arith.addf %o, %m : bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// Logits against a tied embedding table, y[v] += h[d] * E[v, d] (dot form:
// the summed d is last in both inputs): tiles of 4 rows of E, each an
// accumulator of 8 lanes along d, summed across its lanes; the 100 % 8 = 4
// products left along d one by one; 50 % 4 = 2 rows of E in tiles of 1.
// CHECK-LABEL: func.func @tied_logits(
// CHECK-SAME: %[[H:[^:]*]]: memref<100xf32>, %[[E:[^:]*]]: memref<50x100xf32>, %[[Y:[^:]*]]: memref<50xf32>)
// CHECK: scf.if %{{.*}} {
// CHECK:   %[[HV:.*]] = memref.reinterpret_cast
// CHECK:   %[[EV:.*]] = memref.reinterpret_cast
// CHECK:   scf.for %[[V0:.*]] = %{{.*}} to %{{.*}} step %c4{{.*}} {
// CHECK:     %[[ACC:.*]]:4 = scf.for %[[D:.*]] = %{{.*}} to %{{.*}} step %c8{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:       vector.load %[[HV]][%[[D]]]
// CHECK-COUNT-4: vector.load %[[EV]][%{{.*}}, %[[D]]]
// CHECK-COUNT-4: vector.fma
// CHECK:       scf.yield
// CHECK-COUNT-4: vector.reduction <add>, %[[ACC]]#
// CHECK:     scf.for {{.*}} iter_args
// CHECK-COUNT-4: math.fma
// CHECK-COUNT-4: memref.store {{.*}}, %[[Y]]
//   The rows of E the tiles leave: tiles of 1.
// CHECK:   scf.for {{.*}} step %c1{{.*}} {
// CHECK:     scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: } else {
// CHECK:   linalg.generic
// CHECK: }
func.func @tied_logits(%h: memref<100xf32>, %e: memref<50x100xf32>, %y: memref<50xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(v, d) -> (d)>, affine_map<(v, d) -> (v, d)>,
                     affine_map<(v, d) -> (v)>],
    iterator_types = ["parallel", "reduction"]
  } ins(%h, %e : memref<100xf32>, memref<50x100xf32>) outs(%y : memref<50xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows of h against a bf16 table, y[r, v] += h[r, d] * E[v, d]: tiles of
// 4 rows x 2 entries (8 accumulators), the table widened as it is loaded.
// Where h's tiled rows take at most 1 MiB (4 x 64 x 4 bytes here), the
// loop over the rows runs inside the loop over the table's entries, so
// the table is read once, not once per 4 rows; else outside.
// CHECK-LABEL: func.func @tied_logits_rows_bf16(
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK: %[[ENTRIES:.*]] = arith.muli %{{.*}}, %c2{{.*}} : index
// CHECK: %[[ELEMS:.*]] = arith.muli %[[ROWS]], %c64{{.*}} : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEMS]], %c4{{.*}} : index
// CHECK: %[[SMALL:.*]] = arith.cmpi ule, %[[BYTES]], %c1048576
// CHECK: scf.if %[[SMALL]] {
// CHECK:   scf.for {{.*}} to %[[ENTRIES]] step %c2{{.*}} {
// CHECK:     scf.for {{.*}} to %[[ROWS]] step %c4{{.*}} {
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-4: vector.load {{.*}} vector<8xf32>
// CHECK-COUNT-2: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-COUNT-8: vector.fma
// CHECK-COUNT-8: vector.reduction <add>
// CHECK: } else {
// CHECK:   scf.for {{.*}} to %[[ROWS]] step %c4{{.*}} {
// CHECK:     scf.for {{.*}} to %[[ENTRIES]] step %c2{{.*}} {
// CHECK-COUNT-8: vector.fma
func.func @tied_logits_rows_bf16(%h: memref<6x64xf32>, %e: memref<30x64xbf16>, %y: memref<6x30xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(r, v, d) -> (r, d)>, affine_map<(r, v, d) -> (v, d)>,
                     affine_map<(r, v, d) -> (r, v)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%h, %e : memref<6x64xf32>, memref<30x64xbf16>) outs(%y : memref<6x30xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two summed loops, the last in both inputs: not a dot form the kernel
// takes (nor a register tile: n is not B's last dim). Left alone.
// CHECK-LABEL: func.func @dot_over_two_loops(
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @dot_over_two_loops(%h: memref<4x16xf32>, %e: memref<30x4x16xf32>, %y: memref<30xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(v, c, d) -> (c, d)>, affine_map<(v, c, d) -> (v, c, d)>,
                     affine_map<(v, c, d) -> (v)>],
    iterator_types = ["parallel", "reduction", "reduction"]
  } ins(%h, %e : memref<4x16xf32>, memref<30x4x16xf32>) outs(%y : memref<30xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A few rows (decode at batch 8) by large bf16 weights read along their
// rows, y[m, n] += x[m, k] * W[k, n]: where the tiled rows are at most 8
// at run time, W is streamed as a matrix-vector product's is, 4 of its
// rows per step, in blocks of 512 columns, each of x's rows in turn over
// the same block of W's 4 rows (from the L1 cache after the first); with
// more rows, the tiles of 4 x 16.
// CHECK-LABEL: func.func @few_rows(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x768xf32>, %[[W:[^:]*]]: memref<?x3072xbf16>, %[[Y:[^:]*]]: memref<?x3072xf32>)
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[ROWS:.*]], %c8
// CHECK: scf.if %[[FEW]] {
// CHECK:   scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK:     scf.for %[[BLOCK:.*]] = %{{.*}} to %[[COLS:.*]] step %c512
// CHECK:       %[[END:.*]] = arith.addi %[[BLOCK]], %c512
// CHECK:       %[[BLOCK_END:.*]] = arith.minui %[[END]], %[[COLS]]
// CHECK:       scf.for %[[M:.*]] = %{{.*}} to %[[ROWS]] step %c1
// CHECK-COUNT-4: vector.broadcast
// CHECK:         scf.for %[[N:.*]] = %[[BLOCK]] to %[[BLOCK_END]] step %c8
// CHECK:         vector.load %{{.*}}[%[[M]], %[[N]]] : memref<?x?xf32, {{.*}}>, vector<8xf32>
// CHECK-COUNT-4: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK:         vector.store %{{.*}}, %{{.*}}[%[[M]], %[[N]]]
// CHECK: } else {
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[ROWS]] step %c4
// CHECK:     scf.for %{{.*}} step %c16
// CHECK-COUNT-8: vector.fma
func.func @few_rows(%x: memref<?x768xf32>, %w: memref<?x3072xbf16>, %y: memref<?x3072xf32>) {
  linalg.generic {
    indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                     affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]
  } ins(%x, %w : memref<?x768xf32>, memref<?x3072xbf16>) outs(%y : memref<?x3072xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
