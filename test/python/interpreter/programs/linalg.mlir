// linalg.generic (elementwise, reduction, contraction, argmax) and named
// structured ops, each in a node with a single point.
!a = !pdg.value<[], tensor<4x3xf32>>
!b = !pdg.value<[], tensor<3x5xf32>>
!v3 = !pdg.value<[], tensor<3xf32>>
!v4 = !pdg.value<[], tensor<4xf32>>
!s = !pdg.value<[], tensor<6xf32>>

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

pdg.graph @linalg_ops {
  %A = pdg.input "A" : !a
  %B = pdg.input "B" : !b
  %v3 = pdg.input "v3" : !v3
  %v4 = pdg.input "v4" : !v4
  %s = pdg.input "s" : !s
  %A16 = pdg.input "A16" : !pdg.value<[], tensor<4x3xf16>>
  %B16 = pdg.input "B16" : !pdg.value<[], tensor<3x5xf16>>

  // ew[i, j] = A[i, j] * v4[i] + v3[j] + 100 i
  %ew = pdg.node "ew" [] (%x = %A[] : !a, %r = %v4[] : !v4, %c = %v3[] : !v3) -> tensor<4x3xf32> {
    %e = tensor.empty() : tensor<4x3xf32>
    %o = linalg.generic {indexing_maps = [#id2, #row, #col, #id2],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %r, %c : tensor<4x3xf32>, tensor<4xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%xa: f32, %ra: f32, %ca: f32, %out: f32):
        %m = arith.mulf %xa, %ra : f32
        %s1 = arith.addf %m, %ca : f32
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i32
        %hundred = arith.constant 100 : i32
        %h = arith.muli %ii, %hundred : i32
        %hf = arith.sitofp %h : i32 to f32
        %r2 = arith.addf %s1, %hf : f32
        linalg.yield %r2 : f32
    } -> tensor<4x3xf32>
    pdg.yield %o : tensor<4x3xf32>
  }

  // rowsum[i] = 1 + sum_j A[i, j]
  %rowsum = pdg.node "rowsum" [] (%x = %A[] : !a) -> tensor<4xf32> {
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %o = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x3xf32>) outs(%init : tensor<4xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %r = arith.addf %acc, %in : f32
        linalg.yield %r : f32
    } -> tensor<4xf32>
    pdg.yield %o : tensor<4xf32>
  }

  // mm = A B through linalg.generic
  %mm = pdg.node "mm_generic" [] (%x = %A[] : !a, %y = %B[] : !b) -> tensor<4x5xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x5xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                          affine_map<(d0, d1, d2) -> (d2, d1)>,
                                          affine_map<(d0, d1, d2) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %y : tensor<4x3xf32>, tensor<3x5xf32>) outs(%init : tensor<4x5xf32>) {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %m = arith.mulf %p, %q : f32
        %r = arith.addf %acc, %m : f32
        linalg.yield %r : f32
    } -> tensor<4x5xf32>
    pdg.yield %o : tensor<4x5xf32>
  }

  // The index of the largest value of s; on ties the first one wins.
  %am = pdg.node "argmax" [] (%x = %s[] : !s) -> tensor<i64> {
    %ninf = arith.constant 0xFF800000 : f32
    %c0 = arith.constant 0 : i64
    %m0 = tensor.empty() : tensor<f32>
    %m = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<f32>) -> tensor<f32>
    %i0 = tensor.empty() : tensor<i64>
    %i = linalg.fill ins(%c0 : i64) outs(%i0 : tensor<i64>) -> tensor<i64>
    %best:2 = linalg.generic {
        indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>],
        iterator_types = ["reduction"]}
        ins(%x : tensor<6xf32>) outs(%m, %i : tensor<f32>, tensor<i64>) {
      ^bb0(%v: f32, %bm: f32, %bi: i64):
        %idx = linalg.index 0 : index
        %id = arith.index_cast %idx : index to i64
        %gt = arith.cmpf ogt, %v, %bm : f32
        %nm = arith.select %gt, %v, %bm : f32
        %ni = arith.select %gt, %id, %bi : i64
        linalg.yield %nm, %ni : f32, i64
    } -> (tensor<f32>, tensor<i64>)
    pdg.yield %best#1 : tensor<i64>
  }

  // Per row of A, the index of its largest value (sequential over columns,
  // vectorized over rows).
  %ram = pdg.node "row_argmax" [] (%x = %A[] : !a) -> tensor<4xi64> {
    %ninf = arith.constant 0xFF800000 : f32
    %c0 = arith.constant 0 : i64
    %m0 = tensor.empty() : tensor<4xf32>
    %m = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<4xf32>) -> tensor<4xf32>
    %i0 = tensor.empty() : tensor<4xi64>
    %i = linalg.fill ins(%c0 : i64) outs(%i0 : tensor<4xi64>) -> tensor<4xi64>
    %best:2 = linalg.generic {indexing_maps = [#id2, #row, #row],
                              iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<4x3xf32>) outs(%m, %i : tensor<4xf32>, tensor<4xi64>) {
      ^bb0(%v: f32, %bm: f32, %bi: i64):
        %idx = linalg.index 1 : index
        %id = arith.index_cast %idx : index to i64
        %gt = arith.cmpf ogt, %v, %bm : f32
        %nm = arith.select %gt, %v, %bm : f32
        %ni = arith.select %gt, %id, %bi : i64
        linalg.yield %nm, %ni : f32, i64
    } -> (tensor<4xf32>, tensor<4xi64>)
    pdg.yield %best#1 : tensor<4xi64>
  }

  %nmm = pdg.node "matmul" [] (%x = %A[] : !a, %y = %B[] : !b) -> tensor<4x5xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x5xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %o = linalg.matmul ins(%x, %y : tensor<4x3xf32>, tensor<3x5xf32>) outs(%init : tensor<4x5xf32>) -> tensor<4x5xf32>
    pdg.yield %o : tensor<4x5xf32>
  }

  // f16 operands accumulated in f32: the region's extf casts apply.
  %mixed = pdg.node "matmul_mixed" [] (%x = %A16[] : !pdg.value<[], tensor<4x3xf16>>,
                                       %y = %B16[] : !pdg.value<[], tensor<3x5xf16>>) -> tensor<4x5xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x5xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %o = linalg.matmul ins(%x, %y : tensor<4x3xf16>, tensor<3x5xf16>) outs(%init : tensor<4x5xf32>) -> tensor<4x5xf32>
    pdg.yield %o : tensor<4x5xf32>
  }

  %mv = pdg.node "matvec" [] (%x = %A[] : !a, %y = %v3[] : !v3) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %o = linalg.matvec ins(%x, %y : tensor<4x3xf32>, tensor<3xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
    pdg.yield %o : tensor<4xf32>
  }

  %vm = pdg.node "vecmat" [] (%y = %v4[] : !v4, %x = %A[] : !a) -> tensor<3xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<3xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
    %o = linalg.vecmat ins(%y, %x : tensor<4xf32>, tensor<4x3xf32>) outs(%init : tensor<3xf32>) -> tensor<3xf32>
    pdg.yield %o : tensor<3xf32>
  }

  %dt = pdg.node "dot" [] (%y = %v3[] : !v3) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %o = linalg.dot ins(%y, %y : tensor<3xf32>, tensor<3xf32>) outs(%init : tensor<f32>) -> tensor<f32>
    pdg.yield %o : tensor<f32>
  }

  %sm = pdg.node "softmax" [] (%x = %A[] : !a) -> tensor<4x3xf32> {
    %e = tensor.empty() : tensor<4x3xf32>
    %o = linalg.softmax dimension(1) ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    pdg.yield %o : tensor<4x3xf32>
  }

  %tr = pdg.node "transpose" [] (%x = %A[] : !a) -> tensor<3x4xf32> {
    %e = tensor.empty() : tensor<3x4xf32>
    %o = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
    pdg.yield %o : tensor<3x4xf32>
  }

  %bc = pdg.node "broadcast" [] (%x = %v3[] : !v3) -> tensor<4x3xf32> {
    %e = tensor.empty() : tensor<4x3xf32>
    %o = linalg.broadcast ins(%x : tensor<3xf32>) outs(%e : tensor<4x3xf32>) dimensions = [0]
    pdg.yield %o : tensor<4x3xf32>
  }

  // Named elementwise ops run through their own regions.
  %nel = pdg.node "named_elementwise" [] (%x = %A[] : !a) -> tensor<4x3xf32> {
    %e = tensor.empty() : tensor<4x3xf32>
    %ex = linalg.exp ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %ad = linalg.add ins(%ex, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %mx = linalg.max ins(%ad, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %mp = linalg.map ins(%mx, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
      (%p: f32, %q: f32, %o: f32) {
        %r = arith.subf %p, %q : f32
        linalg.yield %r : f32
      }
    pdg.yield %mp : tensor<4x3xf32>
  }

  pdg.output "ew" %ew : !pdg.value<[], tensor<4x3xf32>>
  pdg.output "rowsum" %rowsum : !v4
  pdg.output "mm_generic" %mm : !pdg.value<[], tensor<4x5xf32>>
  pdg.output "argmax" %am : !pdg.value<[], tensor<i64>>
  pdg.output "row_argmax" %ram : !pdg.value<[], tensor<4xi64>>
  pdg.output "matmul" %nmm : !pdg.value<[], tensor<4x5xf32>>
  pdg.output "matmul_mixed" %mixed : !pdg.value<[], tensor<4x5xf32>>
  pdg.output "matvec" %mv : !v4
  pdg.output "vecmat" %vm : !v3
  pdg.output "dot" %dt : !pdg.value<[], tensor<f32>>
  pdg.output "softmax" %sm : !a
  pdg.output "transpose" %tr : !pdg.value<[], tensor<3x4xf32>>
  pdg.output "broadcast" %bc : !a
  pdg.output "named_elementwise" %nel : !a
}
