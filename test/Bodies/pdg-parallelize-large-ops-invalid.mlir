// pdg-parallelize-large-ops asks the runtime whether a body of the
// driver's loop runs its ops as tiles (@pdg_ops_split, () -> i32): a
// module that declares that function with another type is refused.
// RUN: pdg-opt %s --pdg-parallelize-large-ops --verify-diagnostics

// expected-error @+1 {{@pdg_ops_split is declared with another type than '() -> i32'}}
func.func private @pdg_ops_split() -> i1
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
