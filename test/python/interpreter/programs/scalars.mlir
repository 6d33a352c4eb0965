// Integer widths and wraparound, f64 end to end, pdg.point, gathers.
!i64 = !pdg.value<[t], tensor<i64>>

pdg.graph @scalars {
  pdg.dim @t < 6
  %a = pdg.input "a" : !i64
  %b = pdg.input "b" : !i64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f64>>
  %table = pdg.input "table" : !pdg.value<[], tensor<8xf32>>
  %perm = pdg.input "perm" : !pdg.value<[], tensor<5xi64>>

  // a * b (wraps at 64 bits), then i32 arithmetic on the truncated values.
  %ints = pdg.node "ints" [t] (%p = %a[t] : !i64, %q = %b[t] : !i64) -> tensor<8xi64> {
    %av = tensor.extract %p[] : tensor<i64>
    %bv = tensor.extract %q[] : tensor<i64>
    %mul = arith.muli %av, %bv : i64
    %a32 = arith.trunci %av : i64 to i32
    %b32 = arith.trunci %bv : i64 to i32
    %add32 = arith.addi %a32, %b32 : i32
    %add64 = arith.extsi %add32 : i32 to i64
    %div = arith.divsi %av, %bv : i64
    %rem = arith.remsi %av, %bv : i64
    %fdiv = arith.floordivsi %av, %bv : i64
    %c60 = arith.constant 60 : i64
    %shr = arith.shrui %av, %c60 : i64
    %lt = arith.cmpi ult, %av, %bv : i64
    %ltx = arith.extui %lt : i1 to i64
    %tru = arith.constant true
    %x2 = arith.addi %tru, %tru : i1
    %x2s = arith.extsi %x2 : i1 to i64
    %trs = arith.extsi %tru : i1 to i64
    %sum = arith.addi %x2s, %trs : i64
    %r = tensor.from_elements %mul, %add64, %div, %rem, %fdiv, %shr, %ltx, %sum : tensor<8xi64>
    pdg.yield %r : tensor<8xi64>
  }

  // f64 all the way: (x + 1e-10) - x keeps digits f32 would lose.
  %f64 = pdg.node "f64" [t] (%v = %x[t] : !pdg.value<[t], tensor<f64>>) -> tensor<2xf64> {
    %xv = tensor.extract %v[] : tensor<f64>
    %eps = arith.constant 1.0e-10 : f64
    %s = arith.addf %xv, %eps : f64
    %d = arith.subf %s, %xv : f64
    %e = math.exp %xv : f64
    %r = tensor.from_elements %d, %e : tensor<2xf64>
    pdg.yield %r : tensor<2xf64>
  }

  // The current coordinate, times ten.
  %pt = pdg.node "point" [t] -> tensor<i64> {
    %i = pdg.point @t : index
    %c10 = arith.constant 10 : index
    %m = arith.muli %i, %c10 : index
    %r = arith.index_cast %m : index to i64
    %e = tensor.from_elements %r : tensor<i64>
    pdg.yield %e : tensor<i64>
  }

  // table[(3 a[t] + 1) mod 8] with a computed index; then a gather of
  // table[perm[j] + t mod 8] inside a linalg.generic.
  %g = pdg.node "gather" [t] (%p = %a[t] : !i64, %tb = %table[] : !pdg.value<[], tensor<8xf32>>,
                              %pm = %perm[] : !pdg.value<[], tensor<5xi64>>) -> tensor<6xf32> {
    %av = tensor.extract %p[] : tensor<i64>
    %c3 = arith.constant 3 : i64
    %c1 = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %m = arith.muli %av, %c3 : i64
    %s = arith.addi %m, %c1 : i64
    %r = arith.remsi %s, %c8 : i64
    %rr = arith.addi %r, %c8 : i64
    %k = arith.remsi %rr, %c8 : i64
    %ki = arith.index_cast %k : i64 to index
    %one = tensor.extract %tb[%ki] : tensor<8xf32>
    %e = tensor.empty() : tensor<5xf32>
    %tt = pdg.point @t : index
    %many = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                            iterator_types = ["parallel"]}
        ins(%pm : tensor<5xi64>) outs(%e : tensor<5xf32>) {
      ^bb0(%j: i64, %o: f32):
        %ji = arith.index_cast %j : i64 to index
        %sh = arith.addi %ji, %tt : index
        %c8i = arith.constant 8 : index
        %w = arith.remui %sh, %c8i : index
        %v = tensor.extract %tb[%w] : tensor<8xf32>
        linalg.yield %v : f32
    } -> tensor<5xf32>
    %first = tensor.from_elements %one : tensor<1xf32>
    %all = tensor.concat dim(0) %first, %many : (tensor<1xf32>, tensor<5xf32>) -> tensor<6xf32>
    pdg.yield %all : tensor<6xf32>
  }

  pdg.output "ints" %ints : !pdg.value<[t], tensor<8xi64>>
  pdg.output "f64" %f64 : !pdg.value<[t], tensor<2xf64>>
  pdg.output "point" %pt : !i64
  pdg.output "gather" %g : !pdg.value<[t], tensor<6xf32>>
}
