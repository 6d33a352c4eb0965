// pdg-split-over-workers splits b's points over the ranks of a new worker
// dim: values over b become values over [w, b], a sum over all of b becomes
// the rank's partial sum and an all-reduce its readers read, a read of all
// of b for its extent only makes its node (and what reads it) per rank, and
// a sampling key along b ({pdg.global}) becomes w * B + b.
// RUN: pdg-opt %s --split-input-file --pdg-split-over-workers=dim=b | filecheck %s
// RUN: pdg-opt %s --split-input-file --pdg-split-over-workers='dim=b worker=rank world=R' | filecheck %s --check-prefix=NAMED

// CHECK-LABEL: pdg.graph @steps
// CHECK:      pdg.dim @i < launch I
// CHECK-NEXT: pdg.dim @w < world W
// CHECK-NEXT: pdg.dim @b < launch B
// CHECK:      %x = pdg.input "x" : !pdg.value<[w, b], tensor<8xf32>>
// CHECK:      %wt = pdg.node "wt" [i]
// CHECK:      case (i >= 1) (%arg0 = %wt[i - 1] : !pdg.value<[i], tensor<8x16xf32>>, %arg1 = %g[i - 1] : !pdg.value<[i], tensor<8x16xf32>>)
// CHECK:      %y = pdg.node "y" [i, w, b] (%arg0 = %x[w, b] : !pdg.value<[w, b], tensor<8xf32>>, %arg1 = %wt[i] : !pdg.value<[i], tensor<8x16xf32>>)
// CHECK:      %g_partial = pdg.node "g_partial" [i, w] (%arg0 = %y[i, w, 0 : B] : !pdg.value<[i, w, b], tensor<8x16xf32>>) -> tensor<8x16xf32>
// CHECK:      %g = pdg.all_reduce {{ *}}sum %g_partial over @w {name = "g"} : !pdg.value<[i, w], tensor<8x16xf32>> -> !pdg.value<[i], tensor<8x16xf32>>
// CHECK:      pdg.output "wt" %wt : !pdg.value<[i], tensor<8x16xf32>>
// CHECK:      pdg.output "y" %y : !pdg.value<[i, w, b], tensor<8x16xf32>>

// NAMED-LABEL: pdg.graph @steps
// NAMED:       pdg.dim @rank < world R
// NAMED:       pdg.all_reduce {{ *}}sum %g_partial over @rank
pdg.graph @steps {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<8xf32>>
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<8x16xf32>>
  %wt = pdg.node "wt" [i] -> tensor<8x16xf32>
    case (i == 0) (%a = %w0[] : !pdg.value<[], tensor<8x16xf32>>) {
      pdg.yield %a : tensor<8x16xf32>
    }
    case (i >= 1) (%a = %wt[i - 1] : !pdg.value<[i], tensor<8x16xf32>>, %d = %g[i - 1] : !pdg.value<[i], tensor<8x16xf32>>) {
      %e = tensor.empty() : tensor<8x16xf32>
      %s = linalg.sub ins(%a, %d : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
      pdg.yield %s : tensor<8x16xf32>
    }
  %y = pdg.node "y" [i, b] (%xa = %x[b] : !pdg.value<[b], tensor<8xf32>>, %wa = %wt[i] : !pdg.value<[i], tensor<8x16xf32>>) -> tensor<8x16xf32> {
    %e = tensor.empty() : tensor<8x16xf32>
    %o = linalg.broadcast ins(%xa : tensor<8xf32>) outs(%e : tensor<8x16xf32>) dimensions = [1]
    %m = linalg.mul ins(%o, %wa : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    pdg.yield %m : tensor<8x16xf32>
  }
  %g = pdg.node "g" [i] (%arg0 = %y[i, 0 : B] : !pdg.value<[i, b], tensor<8x16xf32>>) -> tensor<8x16xf32> {
    %0 = tensor.empty() : tensor<8x16xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg0 : tensor<?x8x16xf32>) outs(%1 : tensor<8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<8x16xf32>
    pdg.yield %2 : tensor<8x16xf32>
  }
  pdg.output "wt" %wt : !pdg.value<[i], tensor<8x16xf32>>
  pdg.output "y" %y : !pdg.value<[i, b], tensor<8x16xf32>>
}

// -----

// The adjoint of a sum over b: the gradient spread over b's rows (a node
// reading all of b for its extent only) holds the rank's rows, and so does
// what reads it; row b of it is read at the rank's own coordinate.

// CHECK-LABEL: pdg.graph @spread
// CHECK:      %rows = pdg.node "rows" [w] (%arg0 = %s[] : !pdg.value<[], tensor<f32>>, %arg1 = %x[w, 0 : B] : !pdg.value<[w, b], tensor<f32>>) -> tensor<?xf32>
// CHECK:      %scaled = pdg.node "scaled" [w] (%arg0 = %rows[w] : !pdg.value<[w], tensor<?xf32>>) -> tensor<?xf32>
// CHECK:      %row = pdg.node "row" [w, b] (%arg0 = %scaled[w] : !pdg.value<[w], tensor<?xf32>>) -> tensor<f32>
// CHECK:        pdg.point @b : index
// CHECK:      pdg.output "row" %row : !pdg.value<[w, b], tensor<f32>>
pdg.graph @spread {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<f32>>
  %s = pdg.input "s" : !pdg.value<[], tensor<f32>>
  %rows = pdg.node "rows" [] (%v = %s[] : !pdg.value<[], tensor<f32>>, %shape = %x[0 : B] : !pdg.value<[b], tensor<f32>>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %shape, %c0 : tensor<?xf32>
    %e = tensor.empty(%n) : tensor<?xf32>
    %b = linalg.broadcast ins(%v : tensor<f32>) outs(%e : tensor<?xf32>) dimensions = [0]
    pdg.yield %b : tensor<?xf32>
  }
  %scaled = pdg.node "scaled" [] (%r = %rows[] : !pdg.value<[], tensor<?xf32>>) -> tensor<?xf32> {
    pdg.yield %r : tensor<?xf32>
  }
  %row = pdg.node "row" [b] (%r = %scaled[] : !pdg.value<[], tensor<?xf32>>) -> tensor<f32> {
    %p = pdg.point @b : index
    %v = tensor.extract %r[%p] : tensor<?xf32>
    %t = tensor.from_elements %v : tensor<f32>
    pdg.yield %t : tensor<f32>
  }
  pdg.output "row" %row : !pdg.value<[b], tensor<f32>>
}

// -----

// A sampling key along b: the coordinate in the whole program, w * B + b,
// with B (the rank's share) read from b_share. An unmarked coordinate
// stays the rank's own.

// CHECK-LABEL: pdg.graph @keys
// CHECK:      %b_points = pdg.node "b_points" [w, b] -> tensor<i8>
// CHECK:      %b_share = pdg.node "b_share" [w] (%arg0 = %b_points[w, 0 : B] : !pdg.value<[w, b], tensor<i8>>) -> tensor<i64>
// CHECK:        tensor.dim %arg0, %{{.*}} : tensor<?xi8>
// CHECK:      %key = pdg.node "key" [w, b] (%arg0 = %b_share[w] : !pdg.value<[w], tensor<i64>>) -> tensor<i64> {
// CHECK-NEXT:   %[[RANK:.*]] = pdg.point @w : index
// CHECK-NEXT:   %[[N:.*]] = tensor.extract %arg0[] : tensor<i64>
// CHECK-NEXT:   %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT:   %[[BEFORE:.*]] = arith.muli %[[RANK]], %[[NI]] : index
// CHECK-NEXT:   %[[OWN:.*]] = pdg.point @b : index
// CHECK-NEXT:   %[[GLOBAL:.*]] = arith.addi %[[BEFORE]], %[[OWN]] : index
// CHECK-NEXT:   arith.index_cast %[[GLOBAL]] : index to i64
// CHECK:      %local = pdg.node "local" [w, b] -> tensor<i64> {
// CHECK-NEXT:   pdg.point @b : index
// CHECK-NEXT:   arith.index_cast
pdg.graph @keys {
  pdg.dim @b < launch B
  %key = pdg.node "key" [b] -> tensor<i64> {
    %p = pdg.point @b {pdg.global} : index
    %i = arith.index_cast %p : index to i64
    %t = tensor.from_elements %i : tensor<i64>
    pdg.yield %t : tensor<i64>
  }
  %local = pdg.node "local" [b] -> tensor<i64> {
    %p = pdg.point @b : index
    %i = arith.index_cast %p : index to i64
    %t = tensor.from_elements %i : tensor<i64>
    pdg.yield %t : tensor<i64>
  }
  pdg.output "key" %key : !pdg.value<[b], tensor<i64>>
  pdg.output "local" %local : !pdg.value<[b], tensor<i64>>
}

// -----

// One all-reduce per weight: the contributions to one gradient (here a
// tied weight's two uses, one transposed) are added up on each rank first
// and the sum all-reduced once, not each contribution on its own.

// CHECK-LABEL: pdg.graph @tied
// CHECK:      %gx_partial = pdg.node "gx_partial" [w] (%arg0 = %x[w, 0 : B]
// CHECK:      %gy_partial = pdg.node "gy_partial" [w] (%arg0 = %y[w, 0 : B]
// CHECK:      %t_partial = pdg.node "t_partial" [w] (%arg0 = %gy_partial[w] : !pdg.value<[w], tensor<8x4xf32>>) -> tensor<4x8xf32>
// CHECK:      %g_partial = pdg.node "g_partial" [w] (%arg0 = %gx_partial[w] : !pdg.value<[w], tensor<4x8xf32>>, %arg1 = %t_partial[w] : !pdg.value<[w], tensor<4x8xf32>>) -> tensor<4x8xf32>
// CHECK-NEXT:   tensor.empty
// CHECK-NEXT:   linalg.add
// CHECK:      %g = pdg.all_reduce {{ *}}sum %g_partial over @w {name = "g"} : !pdg.value<[w], tensor<4x8xf32>> -> !pdg.value<[], tensor<4x8xf32>>
// CHECK-NEXT: pdg.output "g" %g : !pdg.value<[], tensor<4x8xf32>>
// CHECK-NOT:  pdg.all_reduce
pdg.graph @tied {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<4x8xf32>>
  %y = pdg.input "y" : !pdg.value<[b], tensor<8x4xf32>>
  %gx = pdg.node "gx" [] (%a = %x[0 : B] : !pdg.value<[b], tensor<4x8xf32>>) -> tensor<4x8xf32> {
    %0 = tensor.empty() : tensor<4x8xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%a : tensor<?x4x8xf32>) outs(%1 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4x8xf32>
    pdg.yield %2 : tensor<4x8xf32>
  }
  %gy = pdg.node "gy" [] (%a = %y[0 : B] : !pdg.value<[b], tensor<8x4xf32>>) -> tensor<8x4xf32> {
    %0 = tensor.empty() : tensor<8x4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%a : tensor<?x8x4xf32>) outs(%1 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<8x4xf32>
    pdg.yield %2 : tensor<8x4xf32>
  }
  %t = pdg.node "t" [] (%a = %gy[] : !pdg.value<[], tensor<8x4xf32>>) -> tensor<4x8xf32> {
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%0 : tensor<4x8xf32>) permutation = [1, 0]
    pdg.yield %1 : tensor<4x8xf32>
  }
  %g = pdg.node "g" [] (%a = %gx[] : !pdg.value<[], tensor<4x8xf32>>, %c = %t[] : !pdg.value<[], tensor<4x8xf32>>) -> tensor<4x8xf32> {
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.add ins(%a, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    pdg.yield %1 : tensor<4x8xf32>
  }
  pdg.output "g" %g : !pdg.value<[], tensor<4x8xf32>>
}

// -----

// Sums stay all-reduced on their own where adding first would change the
// result: a sum that something else reads too (its own all-reduce is
// needed anyway), and a node that is not linear in the sums (a constant
// added on every rank would be added W times).

// CHECK-LABEL: pdg.graph @kept_apart
// CHECK:      %ga = pdg.all_reduce {{ *}}sum %ga_partial
// CHECK:      %gb = pdg.all_reduce {{ *}}sum %gb_partial
// CHECK:      %gc = pdg.all_reduce {{ *}}sum %gc_partial
// CHECK:      %shared = pdg.node "shared" [] (%arg0 = %ga[] : !pdg.value<[], tensor<4xf32>>, %arg1 = %gb[] : !pdg.value<[], tensor<4xf32>>)
// CHECK:      %shifted = pdg.node "shifted" [] (%arg0 = %gc[] : !pdg.value<[], tensor<4xf32>>)
// CHECK:      pdg.output "ga" %ga
// CHECK-NOT:  pdg.all_reduce
pdg.graph @kept_apart {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<4xf32>>
  %y = pdg.input "y" : !pdg.value<[b], tensor<4xf32>>
  %z = pdg.input "z" : !pdg.value<[b], tensor<4xf32>>
  %ga = pdg.node "ga" [] (%a = %x[0 : B] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32> {
    %0 = tensor.empty() : tensor<4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  %gb = pdg.node "gb" [] (%a = %y[0 : B] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32> {
    %0 = tensor.empty() : tensor<4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  %gc = pdg.node "gc" [] (%a = %z[0 : B] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32> {
    %0 = tensor.empty() : tensor<4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  %shared = pdg.node "shared" [] (%a = %ga[] : !pdg.value<[], tensor<4xf32>>, %c = %gb[] : !pdg.value<[], tensor<4xf32>>) -> tensor<4xf32> {
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.add ins(%a, %c : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    pdg.yield %1 : tensor<4xf32>
  }
  %shifted = pdg.node "shifted" [] (%a = %gc[] : !pdg.value<[], tensor<4xf32>>) -> tensor<4xf32> {
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %one = arith.constant 1.000000e+00 : f32
      %2 = arith.addf %in, %one : f32
      linalg.yield %2 : f32
    } -> tensor<4xf32>
    pdg.yield %1 : tensor<4xf32>
  }
  pdg.output "ga" %ga : !pdg.value<[], tensor<4xf32>>
  pdg.output "shared" %shared : !pdg.value<[], tensor<4xf32>>
  pdg.output "shifted" %shifted : !pdg.value<[], tensor<4xf32>>
}

// -----

// A node defined at some points only (one case, a condition) keeps the
// all-reduces it reads: an all-reduce reads a value defined everywhere.

// CHECK-LABEL: pdg.graph @conditional
// CHECK:      %gx = pdg.all_reduce {{ *}}sum %gx_partial
// CHECK:      %later = pdg.node "later" [i] -> tensor<4xf32>
// CHECK-NEXT:   case (i >= 1) (%arg0 = %gx[] : !pdg.value<[], tensor<4xf32>>)
// CHECK-NOT:  pdg.all_reduce
pdg.graph @conditional {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<4xf32>>
  %gx = pdg.node "gx" [] (%a = %x[0 : B] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32> {
    %0 = tensor.empty() : tensor<4xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  %later = pdg.node "later" [i] -> tensor<4xf32>
    case (i >= 1) (%a = %gx[] : !pdg.value<[], tensor<4xf32>>) {
      pdg.yield %a : tensor<4xf32>
    }
  pdg.output "later" %later : !pdg.value<[i], tensor<4xf32>>
}
