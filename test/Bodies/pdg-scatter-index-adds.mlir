// pdg-scatter-index-adds: index_add's dense compare form on buffers
// becomes a scatter loop nest; anything else is left alone.
// RUN: pdg-opt %s --pdg-scatter-index-adds --split-input-file | FileCheck %s

// out[v, d] += idx[n] == v ? g[n, d] : 0, as the frontend writes it: loops
// over n then d (unit stride), each adding g[n, d] to row idx[n] if it is
// inside the table.
// CHECK-LABEL: func.func @embedding_gradient
// CHECK-SAME: (%[[G:.*]]: memref<3x4xf32>, %[[IDX:.*]]: memref<3xi64>, %[[OUT:.*]]: memref<5x4xf32>)
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 5 : index
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[D:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[I:.*]] = memref.load %[[IDX]][%[[N]]] : memref<3xi64>
// CHECK-NEXT: %[[ROW:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[T:.*]] = memref.load %[[G]][%[[N]], %[[D]]] : memref<3x4xf32>
// CHECK-NEXT: %[[A:.*]] = memref.load %[[OUT]][%[[ROW]], %[[D]]] : memref<5x4xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[A]] fastmath<reassoc> : f32
// CHECK-NEXT: memref.store %[[S]], %[[OUT]][%[[ROW]], %[[D]]] : memref<5x4xf32>
// CHECK-NOT: linalg.generic
func.func @embedding_gradient(%g: memref<3x4xf32>, %idx: memref<3xi64>, %out: memref<5x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(v, d, n) -> (n, d)>, affine_map<(v, d, n) -> (n)>, affine_map<(v, d, n) -> (v, d)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %idx : memref<3x4xf32>, memref<3xi64>) outs(%out : memref<5x4xf32>) {
  ^bb0(%x: f32, %i: i64, %acc: f32):
    %v = linalg.index 0 : index
    %v64 = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %i, %v64 : i64
    %zero = arith.constant 0.0 : f32
    %picked = arith.select %hit, %x, %zero : f32
    %s = arith.addf %picked, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Batched (a leading b loop, as pdg-vectorize leaves it), i32 indices over
// two dims, the table's dim in the middle of the output, dynamic extents.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[G:.*]]: memref<?x2x3x4xf32>, %[[IDX:.*]]: memref<?x2x3xi32>, %[[OUT:.*]]: memref<?x?x4xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[OUT]], %[[ONE]]
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: scf.for %[[J:.*]] =
// CHECK-NEXT: scf.for %[[B:.*]] =
// CHECK-NEXT: scf.for %[[D:.*]] =
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IDX]][%[[B]], %[[I]], %[[J]]] : memref<?x2x3xi32>
// CHECK-NEXT: %[[ROW:.*]] = arith.index_cast %[[X]] : i32 to index
// CHECK-NEXT: arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK: memref.load %[[G]][%[[B]], %[[I]], %[[J]], %[[D]]]
// CHECK: memref.load %[[OUT]][%[[B]], %[[ROW]], %[[D]]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[B]], %[[ROW]], %[[D]]]
// CHECK-NOT: linalg.generic
func.func @batched(%g: memref<?x2x3x4xf32>, %idx: memref<?x2x3xi32>, %out: memref<?x?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, v, d, i, j) -> (b, i, j, d)>, affine_map<(b, v, d, i, j) -> (b, i, j)>, affine_map<(b, v, d, i, j) -> (b, v, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%g, %idx : memref<?x2x3x4xf32>, memref<?x2x3xi32>) outs(%out : memref<?x?x4xf32>) {
  ^bb0(%x: f32, %i: i32, %acc: f32):
    %v = linalg.index 1 : index
    %v64 = arith.index_cast %v : index to i64
    %i64 = arith.extsi %i : i32 to i64
    %hit = arith.cmpi eq, %i64, %v64 : i64
    %zero = arith.constant 0.0 : f32
    %picked = arith.select %hit, %x, %zero : f32
    %s = arith.addf %picked, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not an index_add, left alone: a comparison other than eq, a term computed
// in the body, the index compared through a truncation, and tensors.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: scf.for
func.func @others(%g: memref<3x4xf32>, %idx: memref<3xi64>, %out: memref<5x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(v, d, n) -> (n, d)>, affine_map<(v, d, n) -> (n)>, affine_map<(v, d, n) -> (v, d)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %idx : memref<3x4xf32>, memref<3xi64>) outs(%out : memref<5x4xf32>) {
  ^bb0(%x: f32, %i: i64, %acc: f32):
    %v = linalg.index 0 : index
    %v64 = arith.index_cast %v : index to i64
    %hit = arith.cmpi sle, %i, %v64 : i64
    %zero = arith.constant 0.0 : f32
    %picked = arith.select %hit, %x, %zero : f32
    %s = arith.addf %picked, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(v, d, n) -> (n, d)>, affine_map<(v, d, n) -> (n)>, affine_map<(v, d, n) -> (v, d)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %idx : memref<3x4xf32>, memref<3xi64>) outs(%out : memref<5x4xf32>) {
  ^bb0(%x: f32, %i: i64, %acc: f32):
    %v = linalg.index 0 : index
    %v64 = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %i, %v64 : i64
    %zero = arith.constant 0.0 : f32
    %twice = arith.addf %x, %x : f32
    %picked = arith.select %hit, %twice, %zero : f32
    %s = arith.addf %picked, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(v, d, n) -> (n, d)>, affine_map<(v, d, n) -> (n)>, affine_map<(v, d, n) -> (v, d)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %idx : memref<3x4xf32>, memref<3xi64>) outs(%out : memref<5x4xf32>) {
  ^bb0(%x: f32, %i: i64, %acc: f32):
    %v = linalg.index 0 : index
    %v8 = arith.index_cast %v : index to i8
    %i8 = arith.trunci %i : i64 to i8
    %hit = arith.cmpi eq, %i8, %v8 : i8
    %zero = arith.constant 0.0 : f32
    %picked = arith.select %hit, %x, %zero : f32
    %s = arith.addf %picked, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @on_tensors
// CHECK: linalg.generic
// CHECK-NOT: scf.for
func.func @on_tensors(%g: tensor<3x4xf32>, %idx: tensor<3xi64>, %out: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(v, d, n) -> (n, d)>, affine_map<(v, d, n) -> (n)>, affine_map<(v, d, n) -> (v, d)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %idx : tensor<3x4xf32>, tensor<3xi64>) outs(%out : tensor<5x4xf32>) {
  ^bb0(%x: f32, %i: i64, %acc: f32):
    %v = linalg.index 0 : index
    %v64 = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %i, %v64 : i64
    %zero = arith.constant 0.0 : f32
    %picked = arith.select %hit, %x, %zero : f32
    %s = arith.addf %picked, %acc : f32
    linalg.yield %s : f32
  } -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}
