// pdg-contract-reductions: a node that only sums a per-point product over
// some dims reads the product's inputs over those dims and contracts them.
// RUN: pdg-opt %s --split-input-file --pdg-contract-reductions | FileCheck %s

!x = !pdg.value<[b, t], tensor<4xf32>>
!y = !pdg.value<[b, t], tensor<3xf32>>
!p = !pdg.value<[b, t], tensor<3x4xf32>>
#outer_x = affine_map<(i, j) -> (j)>
#outer_y = affine_map<(i, j) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
#all4 = affine_map<(b, t, i, j) -> (b, t, i, j)>
#last2 = affine_map<(b, t, i, j) -> (i, j)>

// A weight gradient: sum over b and t of y (x) x. The sum reads x and y
// over the slices it read the product with; the summed dims lead the loops.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: pdg.graph @weight_gradient
// CHECK-NOT: pdg.node "outer"
// CHECK: %grad = pdg.node "grad" [] (%[[A:.*]] = %x[0 : B, 0 : 8] : !pdg.value<[b, t], tensor<4xf32>>, %[[B:.*]] = %y[0 : B, 0 : 8] : !pdg.value<[b, t], tensor<3xf32>>) -> tensor<3x4xf32> {
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[Y]], #[[OUT]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<?x8x4xf32>, tensor<?x8x3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
pdg.graph @weight_gradient {
  pdg.dim @b < launch B
  pdg.dim @t < 8
  %x = pdg.input "x" : !x
  %y = pdg.input "y" : !y
  %outer = pdg.node "outer" [b, t] (%a = %x[b, t] : !x, %c = %y[b, t] : !y) -> tensor<3x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
    %g = linalg.generic {indexing_maps = [#outer_x, #outer_y, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %c : tensor<4xf32>, tensor<3xf32>) outs(%f : tensor<3x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x4xf32>
    pdg.yield %g : tensor<3x4xf32>
  }
  %grad = pdg.node "grad" [] (%a = %outer[0 : B, 0 : 8] : !p) -> tensor<3x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
    %g = linalg.generic {indexing_maps = [#all4, #last2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x8x3x4xf32>) outs(%f : tensor<3x4xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<3x4xf32>
    pdg.yield %g : tensor<3x4xf32>
  }
  pdg.output "grad" %grad : !pdg.value<[], tensor<3x4xf32>>
}

// -----

!x = !pdg.value<[b, t], tensor<4xf32>>
!w = !pdg.value<[], tensor<4xf32>>
!i = !pdg.value<[b, t], tensor<i64>>
!p = !pdg.value<[b, t], tensor<5x4xf32>>
#row = affine_map<(i, j) -> (j)>
#scalar = affine_map<(i, j) -> ()>
#id2 = affine_map<(i, j) -> (i, j)>
#sum_t = affine_map<(t, i, j) -> (t, i, j)>
#keep = affine_map<(t, i, j) -> (i, j)>

// An embedding's gradient summed over t only, per b: b stays a point
// (%x[b, 0 : 8]), a weight read without dims stays unsliced, the body's
// constant is cloned with the region that uses it, and linalg.index 0
// (the row) becomes loop 1 behind the new reduction.
// CHECK-LABEL: pdg.graph @embedding_per_sequence
// CHECK-NOT: pdg.node "scatter"
// CHECK: pdg.node "rows" [b] (%{{.*}} = %x[b, 0 : 8] : !pdg.value<[b, t], tensor<4xf32>>, %{{.*}} = %tok[b, 0 : 8] : !pdg.value<[b, t], tensor<i64>>, %{{.*}} = %w[] : !pdg.value<[], tensor<4xf32>>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: iterator_types = ["reduction", "parallel", "parallel"]
// CHECK: linalg.index 1 : index
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : f32
pdg.graph @embedding_per_sequence {
  pdg.dim @b < launch B
  pdg.dim @t < 8
  %x = pdg.input "x" : !x
  %tok = pdg.input "tok" : !i
  %w = pdg.input "w" : !w
  %scatter = pdg.node "scatter" [b, t] (%a = %x[b, t] : !x, %k = %tok[b, t] : !i, %s = %w[] : !w) -> tensor<5x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<5x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
    %g = linalg.generic {indexing_maps = [#row, #scalar, #row, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %k, %s : tensor<4xf32>, tensor<i64>, tensor<4xf32>) outs(%f : tensor<5x4xf32>) {
    ^bb0(%u: f32, %n: i64, %v: f32, %o: f32):
      %r = linalg.index 0 : index
      %ri = arith.index_cast %r : index to i64
      %hit = arith.cmpi eq, %n, %ri : i64
      %uv = arith.mulf %u, %v : f32
      %pick = arith.select %hit, %uv, %z : f32
      %sum = arith.addf %pick, %o : f32
      linalg.yield %sum : f32
    } -> tensor<5x4xf32>
    pdg.yield %g : tensor<5x4xf32>
  }
  %rows = pdg.node "rows" [b] (%a = %scatter[b, 0 : 8] : !p) -> tensor<5x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<5x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<5x4xf32>) -> tensor<5x4xf32>
    %g = linalg.generic {indexing_maps = [#sum_t, #keep], iterator_types = ["reduction", "parallel", "parallel"]}
        ins(%a : tensor<8x5x4xf32>) outs(%f : tensor<5x4xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<5x4xf32>
    pdg.yield %g : tensor<5x4xf32>
  }
  pdg.output "rows" %rows : !pdg.value<[b], tensor<5x4xf32>>
}

// -----

!x = !pdg.value<[b, t], tensor<4xf32>>
!p = !pdg.value<[b, t], tensor<4x4xf32>>
!d = !pdg.value<[b, t], tensor<f32>>
#i = affine_map<(i, j) -> (i)>
#j = affine_map<(i, j) -> (j)>
#id2 = affine_map<(i, j) -> (i, j)>
#all4 = affine_map<(b, t, i, j) -> (b, t, i, j)>
#last2 = affine_map<(b, t, i, j) -> (i, j)>
#v = affine_map<(k) -> (k)>
#none = affine_map<(k) -> ()>
#all2 = affine_map<(b, t) -> (b, t)>
#nothing = affine_map<(b, t) -> ()>

// Left alone: a product with a second reader, a product reading another
// step (x[b, 7 - t]), a product whose inputs hold more than it does (a dot
// product), a sum that also scales, and a sum over t of a product whose
// inputs do not vary along t (each term counts 8 times).
// CHECK-LABEL: pdg.graph @kept
// CHECK: pdg.node "shared"
// CHECK: pdg.node "sum_shared" [] (%{{.*}} = %shared[0 : B, 0 : 8]
// CHECK: pdg.node "shifted"
// CHECK: pdg.node "sum_shifted" [] (%{{.*}} = %shifted[0 : B, 0 : 8]
// CHECK: pdg.node "dot"
// CHECK: pdg.node "sum_dot" [] (%{{.*}} = %dot[0 : B, 0 : 8]
// CHECK: pdg.node "scaled_product"
// CHECK: pdg.node "mean" [] (%{{.*}} = %scaled_product[0 : B, 0 : 8]
// CHECK: pdg.node "constant_in_t"
// CHECK: pdg.node "sum_constant_in_t" [] (%{{.*}} = %constant_in_t[0 : B, 0 : 8]
pdg.graph @kept {
  pdg.dim @b < launch B
  pdg.dim @t < 8
  %x = pdg.input "x" : !x
  %xb = pdg.input "xb" : !pdg.value<[b], tensor<4xf32>>
  %shared = pdg.node "shared" [b, t] (%a = %x[b, t] : !x) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#i, #j, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %sum_shared = pdg.node "sum_shared" [] (%a = %shared[0 : B, 0 : 8] : !p) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#all4, #last2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x8x4x4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %shifted = pdg.node "shifted" [b, t] (%a = %x[b, t] : !x, %c = %x[b, 7 - t] : !x) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#i, #j, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %c : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %sum_shifted = pdg.node "sum_shifted" [] (%a = %shifted[0 : B, 0 : 8] : !p) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#all4, #last2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x8x4x4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %dot = pdg.node "dot" [b, t] (%a = %x[b, t] : !x) -> tensor<f32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %g = linalg.generic {indexing_maps = [#v, #v, #none], iterator_types = ["reduction"]}
        ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<f32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    pdg.yield %g : tensor<f32>
  }
  %sum_dot = pdg.node "sum_dot" [] (%a = %dot[0 : B, 0 : 8] : !d) -> tensor<f32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %g = linalg.generic {indexing_maps = [#all2, #nothing], iterator_types = ["reduction", "reduction"]}
        ins(%a : tensor<?x8xf32>) outs(%f : tensor<f32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    pdg.yield %g : tensor<f32>
  }
  %scaled_product = pdg.node "scaled_product" [b, t] (%a = %x[b, t] : !x) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#i, #j, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %mean = pdg.node "mean" [] (%a = %scaled_product[0 : B, 0 : 8] : !p) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %k = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#all4, #last2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x8x4x4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %o: f32):
      %h = arith.mulf %u, %k : f32
      %s = arith.addf %h, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %constant_in_t = pdg.node "constant_in_t" [b, t] (%a = %xb[b] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#i, #j, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %m, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  %sum_constant_in_t = pdg.node "sum_constant_in_t" [] (%a = %constant_in_t[0 : B, 0 : 8] : !p) -> tensor<4x4xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#all4, #last2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
        ins(%a : tensor<?x8x4x4xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%u: f32, %o: f32):
      %s = arith.addf %u, %o : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    pdg.yield %g : tensor<4x4xf32>
  }
  pdg.output "sum_constant_in_t" %sum_constant_in_t : !pdg.value<[], tensor<4x4xf32>>
  pdg.output "sum_shared" %sum_shared : !pdg.value<[], tensor<4x4xf32>>
  pdg.output "shared" %shared : !p
  pdg.output "sum_shifted" %sum_shifted : !pdg.value<[], tensor<4x4xf32>>
  pdg.output "sum_dot" %sum_dot : !pdg.value<[], tensor<f32>>
  pdg.output "mean" %mean : !pdg.value<[], tensor<4x4xf32>>
}
