// pdg-check-indices: loads and stores in node bodies at indices computed
// from data get a bounds check; the access then uses a clamped index.
// RUN: pdg-opt %s --pdg-check-indices --split-input-file | FileCheck %s

// A gather: ids from data index the table. The check compares against the
// table's extent, reports the site (0), the index, the extent and the
// point's two coordinates, and the load reads index 0 instead.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[TABLE:.*]]: memref<8x4xf32>, %[[IDS:.*]]: memref<?xi64>, %[[B:.*]]: index, %[[T:.*]]: index
// CHECK:   %[[ID:.*]] = memref.load %[[IDS]][%{{.*}}] : memref<?xi64>
// CHECK:   %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:   %[[EXTENT:.*]] = memref.dim %[[TABLE]], %{{.*}} : memref<8x4xf32>
// CHECK:   %[[INSIDE:.*]] = arith.cmpi ult, %[[I]], %[[EXTENT]] : index
// CHECK:   %[[OUTSIDE:.*]] = arith.xori %[[INSIDE]], %{{.*}} : i1
// CHECK:   scf.if %[[OUTSIDE]] {
// CHECK:     %[[SITE:.*]] = arith.constant 0 : i64
// CHECK:     %[[V:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:     %[[E:.*]] = arith.index_cast %[[EXTENT]] : index to i64
// CHECK:     %[[N:.*]] = arith.constant 2 : i64
// CHECK:     %[[CB:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK:     %[[CT:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK:     %[[Z:.*]] = arith.constant 0 : i64
// CHECK:     func.call @pdg_index_fault(%[[SITE]], %[[V]], %[[E]], %[[N]], %[[CB]], %[[CT]], %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]], %[[Z]])
// CHECK:   }
// CHECK:   %[[SAFE:.*]] = arith.select %[[INSIDE]], %[[I]], %{{.*}} : index
// CHECK:   memref.load %[[TABLE]][%[[SAFE]], %{{.*}}] : memref<8x4xf32>
// An index from the loop itself is left alone.
// CHECK-NOT: pdg_index_fault
// CHECK: return
func.func @gather(%table: memref<8x4xf32>, %ids: memref<?xi64>, %b: index, %t: index,
                  %out: memref<?x4xf32>) attributes {pdg.node = "emb"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %ids, %c0 : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %id = memref.load %ids[%i] : memref<?xi64>
      %row = arith.index_cast %id : i64 to index
      %v = memref.load %table[%row, %j] : memref<8x4xf32>
      memref.store %v, %out[%i, %j] : memref<?x4xf32>
    }
  }
  return
}
// CHECK: func.func private @pdg_index_fault(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)

// -----

// A scatter at an offset position (a store), numbered after the loads of
// the same function; functions that are not node bodies are not checked.
// CHECK-LABEL: func.func @scatter(
// CHECK:   %[[P:.*]] = arith.addi
// CHECK:   memref.dim %{{.*}}, %{{.*}} : memref<?xf32>
// CHECK:   arith.cmpi ult, %[[P]]
// CHECK:   arith.constant 0 : i64
// CHECK:   %[[N:.*]] = arith.constant 0 : i64
// CHECK:   func.call @pdg_index_fault(%{{.*}}, %{{.*}}, %{{.*}}, %[[N]],
// CHECK:   memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-LABEL: func.func @not_a_body(
// CHECK-NOT: pdg_index_fault
// CHECK: return
func.func @scatter(%pos: memref<i32>, %v: f32, %out: memref<?xf32>) attributes {pdg.node = "s"} {
  %c2 = arith.constant 2 : index
  %p32 = memref.load %pos[] : memref<i32>
  %p = arith.index_cast %p32 : i32 to index
  %q = arith.addi %p, %c2 : index
  memref.store %v, %out[%q] : memref<?xf32>
  return
}
func.func @not_a_body(%pos: memref<i32>, %out: memref<?xf32>) -> f32 {
  %p32 = memref.load %pos[] : memref<i32>
  %p = arith.index_cast %p32 : i32 to index
  %v = memref.load %out[%p] : memref<?xf32>
  return %v : f32
}
