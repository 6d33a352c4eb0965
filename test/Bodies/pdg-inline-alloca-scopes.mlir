// pdg-inline-alloca-scopes: a memref.alloca_scope whose own region
// allocates nothing on the stack is dissolved into its parent block (the
// scopes convert-scf-to-openmp puts around parallel loop bodies, which
// would hold several blocks after convert-scf-to-cf).
// RUN: pdg-opt %s --pdg-inline-alloca-scopes | FileCheck %s
// RUN: pdg-opt %s --convert-scf-to-openmp --pdg-inline-alloca-scopes --convert-scf-to-cf | FileCheck %s --check-prefix=OMP

func.func private @body(memref<?xf32>, index)

// A call (its callee's allocas live in its own frame): inlined, with the
// scope's result.
// CHECK-LABEL: func.func @call_only(
// CHECK-NOT: memref.alloca_scope
// CHECK: %[[V:.*]] = arith.addi
// CHECK: call @body
// CHECK: return %[[V]] : index
func.func @call_only(%m: memref<?xf32>, %i: index) -> index {
  %r = memref.alloca_scope -> (index) {
    %j = arith.addi %i, %i : index
    func.call @body(%m, %j) : (memref<?xf32>, index) -> ()
    memref.alloca_scope.return %j : index
  }
  return %r : index
}

// An alloca of its own: the scope stays. A nested scope that allocates
// nothing goes, and its parent then holds the alloca only.
// CHECK-LABEL: func.func @allocates(
// CHECK: memref.alloca_scope {
// CHECK-NEXT: memref.alloca() : memref<4xf32>
// CHECK-NOT: memref.alloca_scope
// CHECK: call @body
// CHECK: }
func.func @allocates(%m: memref<?xf32>, %i: index) {
  memref.alloca_scope {
    %a = memref.alloca() : memref<4xf32>
    memref.alloca_scope {
      func.call @body(%m, %i) : (memref<?xf32>, index) -> ()
    }
  }
  return
}

// The case it exists for: a parallel loop whose body branches.
// OMP-LABEL: func.func @parallel_with_branch(
// OMP: omp.parallel
// OMP: omp.loop_nest
// OMP-NOT: memref.alloca_scope
// OMP: cf.cond_br
// OMP: call @body
func.func @parallel_with_branch(%m: memref<?xf32>, %n: index, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.if %flag {
      func.call @body(%m, %i) : (memref<?xf32>, index) -> ()
    }
    scf.reduce
  }
  return
}
