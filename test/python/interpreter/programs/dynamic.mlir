// A dynamic dim that ends separately for each b, and readers of the whole
// ragged sequence through its bound symbol T.
!bt = !pdg.value<[b, t], tensor<i64>>

pdg.graph @count {
  pdg.dim @b < launch B max 8
  pdg.dim @t < dynamic T max 16 until %done : !pdg.value<[b, t], tensor<i1>>
  %start = pdg.input "start" : !pdg.value<[b], tensor<i64>>
  %limit = pdg.input "limit" : !pdg.value<[b], tensor<i64>>

  // c[b, t] = start[b] + 3 t
  %c = pdg.node "c" [b, t] -> tensor<i64>
    case (t == 0) (%s = %start[b] : !pdg.value<[b], tensor<i64>>) {
      pdg.yield %s : tensor<i64>
    }
    case (t >= 1) (%p = %c[b, t - 1] : !bt) {
      %three = arith.constant dense<3> : tensor<i64>
      %n = arith.addi %p, %three : tensor<i64>
      pdg.yield %n : tensor<i64>
    }

  // b's sequence ends at the first t with c[b, t] >= limit[b].
  %done = pdg.node "done" [b, t] (%v = %c[b, t] : !bt, %l = %limit[b] : !pdg.value<[b], tensor<i64>>) -> tensor<i1> {
    %d = arith.cmpi sge, %v, %l : tensor<i64>
    pdg.yield %d : tensor<i1>
  }

  // After the loop: the sum of the whole sequence and its last value.
  %total = pdg.node "total" [b] (%all = %c[b, 0 : T] : !bt) -> tensor<i64> {
    %zero = arith.constant 0 : i64
    %e = tensor.empty() : tensor<i64>
    %init = linalg.fill ins(%zero : i64) outs(%e : tensor<i64>) -> tensor<i64>
    %s = linalg.reduce ins(%all : tensor<?xi64>) outs(%init : tensor<i64>) dimensions = [0]
      (%in: i64, %acc: i64) {
        %r = arith.addi %in, %acc : i64
        linalg.yield %r : i64
      }
    pdg.yield %s : tensor<i64>
  }
  %last = pdg.node "last" [b] (%v = %c[b, T - 1] : !bt) -> tensor<i64> {
    pdg.yield %v : tensor<i64>
  }

  pdg.output "c" %c : !bt
  pdg.output "done" %done : !pdg.value<[b, t], tensor<i1>>
  pdg.output "total" %total : !pdg.value<[b], tensor<i64>>
  pdg.output "last" %last : !pdg.value<[b], tensor<i64>>
}
