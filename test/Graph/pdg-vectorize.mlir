// pdg-vectorize: the batch dim b folds into the point type; the recurrence
// x[b, t] = x[b, t - 1] @ w runs once per step for the whole batch.
// RUN: pdg-opt %s --split-input-file --pdg-vectorize | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: pdg.graph @matvec
// The input over b is read whole, through the slice [0 : B].
// CHECK: %x = pdg.node "x" [t] -> tensor<?x2xf32>
// CHECK-NEXT: case (t == 0) (%[[A:.*]] = %x0[0 : B] : !pdg.value<[b], tensor<2xf32>>) {
// CHECK-NEXT:   pdg.yield %[[A]] : tensor<?x2xf32>
// CHECK: case (t >= 1) (%[[P:.*]] = %x[t - 1] : !pdg.value<[t], tensor<?x2xf32>>, %[[M:.*]] = %w[] : !pdg.value<[], tensor<2x2xf32>>) {
// CHECK:   %[[B:.*]] = tensor.dim %[[P]], %{{.*}} : tensor<?x2xf32>
// CHECK:   %[[E:.*]] = tensor.empty(%[[B]]) : tensor<?x2xf32>
// CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x2xf32>)
// A leading parallel loop over the batch; the weights are not batched.
// CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]], %[[M]] : tensor<?x2xf32>, tensor<2x2xf32>) outs(%[[F]] : tensor<?x2xf32>)
// The output keeps its per-sequence form: row b of the batch.
// CHECK: %x_row = pdg.node "x_row" [b, t] (%[[R:.*]] = %x[t] : !pdg.value<[t], tensor<?x2xf32>>) -> tensor<2xf32> {
// CHECK:   %[[I:.*]] = pdg.point @b : index
// CHECK:   tensor.extract_slice %[[R]][%[[I]], 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<2xf32>
// CHECK: pdg.output "x" %x_row : !pdg.value<[b, t], tensor<2xf32>>
pdg.graph @matvec {
  pdg.dim @b < launch B max 4
  pdg.dim @t < 8
  %x0 = pdg.input "x0" : !pdg.value<[b], tensor<2xf32>>
  %w = pdg.input "w" : !pdg.value<[], tensor<2x2xf32>>
  %x = pdg.node "x" [b, t] -> tensor<2xf32>
    case (t == 0) (%a = %x0[b] : !pdg.value<[b], tensor<2xf32>>) {
      pdg.yield %a : tensor<2xf32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<2xf32>>, %m = %w[] : !pdg.value<[], tensor<2x2xf32>>) {
      %e = tensor.empty() : tensor<2xf32>
      %z = arith.constant 0.0 : f32
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]} ins(%p, %m : tensor<2xf32>, tensor<2x2xf32>) outs(%f : tensor<2xf32>) {
      ^bb0(%a: f32, %c: f32, %acc: f32):
        %mm = arith.mulf %a, %c : f32
        %s = arith.addf %mm, %acc : f32
        linalg.yield %s : f32
      } -> tensor<2xf32>
      pdg.yield %r : tensor<2xf32>
    }
  pdg.output "x" %x : !pdg.value<[b, t], tensor<2xf32>>
}

// -----

// A static batch gives static shapes; a window read of a batched value puts
// the batch after the window (the generic indexes it there); pdg.point @b in
// a loop body becomes the batch loop's index.
// RUN: pdg-opt %s --split-input-file --pdg-vectorize | FileCheck %s --check-prefix=STATIC
// STATIC-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// STATIC-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// STATIC-LABEL: pdg.graph @windowed
// STATIC: %k = pdg.node "k" [t] (%{{.*}} = %x0[0 : 3] : !pdg.value<[b], tensor<4xf32>>) -> tensor<3x4xf32>
// STATIC: %s = pdg.node "s" [t] (%[[K:.*]] = %k[max(0, t - 1) : t + 1] : !pdg.value<[t], tensor<3x4xf32>>) -> tensor<3xf32>
// STATIC: linalg.generic {indexing_maps = [#[[WIN]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[K]] : tensor<?x3x4xf32>)
// STATIC: %[[BI:.*]] = linalg.index 0 : index
// STATIC: arith.index_cast %[[BI]]
pdg.graph @windowed {
  pdg.dim @b < 3
  pdg.dim @t < 8
  %x0 = pdg.input "x0" : !pdg.value<[b], tensor<4xf32>>
  %k = pdg.node "k" [b, t] (%a = %x0[b] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32> {
    pdg.yield %a : tensor<4xf32>
  }
  %s = pdg.node "s" [b, t] (%w = %k[b, max(0, t - 1) : t + 1] : !pdg.value<[b, t], tensor<4xf32>>) -> tensor<f32> {
    %bi = pdg.point @b : index
    %e = tensor.empty() : tensor<f32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(s, d) -> (s, d)>, affine_map<(s, d) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%w : tensor<?x4xf32>) outs(%f : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %i = arith.index_cast %bi : index to i64
      %fi = arith.sitofp %i : i64 to f32
      %m = arith.mulf %a, %fi : f32
      %y = arith.addf %m, %acc : f32
      linalg.yield %y : f32
    } -> tensor<f32>
    pdg.yield %r : tensor<f32>
  }
  pdg.output "s" %s : !pdg.value<[b, t], tensor<f32>>
}

// -----

// A constant case of a varying node reads the batch source (an input over
// [b]) to know B; a node that varies with nothing over b keeps its type.
// RUN: pdg-opt %s --split-input-file --pdg-vectorize | FileCheck %s --check-prefix=CONST
// CONST-LABEL: pdg.graph @constants
// CONST: %same = pdg.node "same" [t] -> tensor<i64> {
// CONST: %same_row = pdg.node "same_row" [b, t] (%[[R:.*]] = %same[t] : !pdg.value<[t], tensor<i64>>) -> tensor<i64> {
// CONST-NEXT: pdg.yield %[[R]] : tensor<i64>
// CONST: %next = pdg.node "next" [t] -> tensor<?xi64>
// CONST-NEXT: case (t == 0) (%[[S:.*]] = %prompt[0 : B] : !pdg.value<[b], tensor<i64>>) {
// CONST: %[[N:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?xi64>
// CONST: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CONST: linalg.broadcast ins(%{{.*}} : tensor<i64>) outs(%[[E]] : tensor<?xi64>) dimensions = [0]
pdg.graph @constants {
  pdg.dim @b < launch B max 8
  pdg.dim @t < 4
  %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
  %same = pdg.node "same" [b, t] -> tensor<i64> {
    %c = arith.constant dense<7> : tensor<i64>
    pdg.yield %c : tensor<i64>
  }
  %next = pdg.node "next" [b, t] -> tensor<i64>
    case (t == 0) {
      %z = arith.constant dense<0> : tensor<i64>
      pdg.yield %z : tensor<i64>
    }
    default (%p = %next[b, t - 1] : !pdg.value<[b, t], tensor<i64>>, %q = %prompt[b] : !pdg.value<[b], tensor<i64>>) {
      %s = arith.addi %p, %q : tensor<i64>
      pdg.yield %s : tensor<i64>
    }
  pdg.output "same" %same : !pdg.value<[b, t], tensor<i64>>
  pdg.output "next" %next : !pdg.value<[b, t], tensor<i64>>
}

// -----

// A reader without b (a total over the batch) reads the per-sequence rows.
// CHECK-LABEL: pdg.graph @total_over_the_batch
// CHECK: %y = pdg.node "y" [] (%{{.*}} = %x[0 : B] : !pdg.value<[b], tensor<2xf32>>) -> tensor<?x2xf32>
// CHECK: %y_row = pdg.node "y_row" [b] (%{{.*}} = %y[] : !pdg.value<[], tensor<?x2xf32>>) -> tensor<2xf32>
// CHECK: %total = pdg.node "total" [] (%{{.*}} = %y_row[0 : B] : !pdg.value<[b], tensor<2xf32>>) -> tensor<2xf32>
pdg.graph @total_over_the_batch {
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<2xf32>>
  %y = pdg.node "y" [b] (%a = %x[b] : !pdg.value<[b], tensor<2xf32>>) -> tensor<2xf32> {
    %e = math.exp %a : tensor<2xf32>
    pdg.yield %e : tensor<2xf32>
  }
  %total = pdg.node "total" [] (%a = %y[0 : B] : !pdg.value<[b], tensor<2xf32>>) -> tensor<2xf32> {
    %c0 = arith.constant 0 : index
    %r = tensor.extract_slice %a[0, 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<2xf32>
    pdg.yield %r : tensor<2xf32>
  }
  pdg.output "total" %total : !pdg.value<[], tensor<2xf32>>
}

// -----

// A node that uses the coordinate b as a scalar (it picks row b of a value
// over the whole batch) has no batched form: it stays over [b], and the
// vectorized node after it reads it whole, as an input.
// CHECK-LABEL: pdg.graph @row_by_coordinate
// CHECK: %pick = pdg.node "pick" [b] (%{{.*}} = %table[] : !pdg.value<[], tensor<4x2xf32>>) -> tensor<2xf32>
// CHECK: pdg.point @b
// CHECK: %z = pdg.node "z" [] (%{{.*}} = %pick[0 : B] : !pdg.value<[b], tensor<2xf32>>) -> tensor<?x2xf32>
pdg.graph @row_by_coordinate {
  pdg.dim @b < launch B
  %table = pdg.input "table" : !pdg.value<[], tensor<4x2xf32>>
  %pick = pdg.node "pick" [b] (%t = %table[] : !pdg.value<[], tensor<4x2xf32>>) -> tensor<2xf32> {
    %i = pdg.point @b : index
    %r = tensor.extract_slice %t[%i, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<2xf32>
    pdg.yield %r : tensor<2xf32>
  }
  %z = pdg.node "z" [b] (%a = %pick[b] : !pdg.value<[b], tensor<2xf32>>) -> tensor<2xf32> {
    %e = math.exp %a : tensor<2xf32>
    pdg.yield %e : tensor<2xf32>
  }
  pdg.output "z" %z : !pdg.value<[b], tensor<2xf32>>
}

// -----

// A loop body reading a batched value with tensor.extract at indices the
// body computed outside the loop (a constant, an offset): the batched read
// takes the batched body's copies of them, and the batch index first.
// RUN: pdg-opt %s --split-input-file --pdg-vectorize | FileCheck %s --check-prefix=CAPTURED
// CAPTURED-LABEL: pdg.graph @captured_index
// CAPTURED: pdg.node "shifted" [t] (%[[X:.*]] = %x[0 : B, t] : !pdg.value<[b, t], tensor<4xf32>>) -> tensor<?x4xf32> {
// CAPTURED: %[[ONE:.*]] = arith.constant 1 : index
// CAPTURED: linalg.generic
// CAPTURED: %[[BI:.*]] = linalg.index 0 : index
// CAPTURED: tensor.extract %[[X]][%[[BI]], %[[ONE]]] : tensor<?x4xf32>
pdg.graph @captured_index {
  pdg.dim @b < launch B max 4
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<4xf32>>
  %shifted = pdg.node "shifted" [b, t] (%a = %x[b, t] : !pdg.value<[b, t], tensor<4xf32>>) -> tensor<4xf32> {
    %one = arith.constant 1 : index
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
    ^bb0(%o: f32):
      %v = tensor.extract %a[%one] : tensor<4xf32>
      linalg.yield %v : f32
    } -> tensor<4xf32>
    pdg.yield %r : tensor<4xf32>
  }
  pdg.output "shifted" %shifted : !pdg.value<[b, t], tensor<4xf32>>
}
