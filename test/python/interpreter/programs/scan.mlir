// Recurrences over one and two nodes, and batch dims.
!f = !pdg.value<[t], tensor<f32>>
!i = !pdg.value<[t], tensor<i64>>
!bt = !pdg.value<[b, t], tensor<i64>>

pdg.graph @scan {
  pdg.dim @b < launch B max 8
  pdg.dim @t < 10
  %a = pdg.input "a" : !f
  %ab = pdg.input "ab" : !bt

  // x[0] = a[0];  x[t] = x[t - 1] + a[t]
  %x = pdg.node "x" [t] -> tensor<f32>
    case (t == 0) (%a0 = %a[t] : !f) {
      pdg.yield %a0 : tensor<f32>
    }
    case (t >= 1) (%p = %x[t - 1] : !f, %at = %a[t] : !f) {
      %s = arith.addf %p, %at : tensor<f32>
      pdg.yield %s : tensor<f32>
    }

  // Fibonacci as two nodes: f[t] = f[t-1] + g[t-1], g[t] = f[t-1].
  %f = pdg.node "f" [t] -> tensor<i64>
    case (t == 0) {
      %one = arith.constant dense<1> : tensor<i64>
      pdg.yield %one : tensor<i64>
    }
    case (t >= 1) (%pf = %f[t - 1] : !i, %pg = %g[t - 1] : !i) {
      %s = arith.addi %pf, %pg : tensor<i64>
      pdg.yield %s : tensor<i64>
    }
  %g = pdg.node "g" [t] -> tensor<i64>
    case (t == 0) {
      %zero = arith.constant dense<0> : tensor<i64>
      pdg.yield %zero : tensor<i64>
    }
    case (t >= 1) (%pf = %f[t - 1] : !i) {
      pdg.yield %pf : tensor<i64>
    }

  // Per batch row: y[b, 0] = ab[b, 0];  y[b, t] = 2 * y[b, t - 1] + ab[b, t]
  %y = pdg.node "y" [b, t] -> tensor<i64>
    case (t == 0) (%v = %ab[b, t] : !bt) {
      pdg.yield %v : tensor<i64>
    }
    case (t >= 1) (%p = %y[b, t - 1] : !bt, %v = %ab[b, t] : !bt) {
      %two = arith.constant dense<2> : tensor<i64>
      %d = arith.muli %p, %two : tensor<i64>
      %s = arith.addi %d, %v : tensor<i64>
      pdg.yield %s : tensor<i64>
    }

  pdg.output "x" %x : !f
  pdg.output "f" %f : !i
  pdg.output "y" %y : !bt
}
