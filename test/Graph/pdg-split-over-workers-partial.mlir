// After pdg-split-over-workers, a value read only by a rank's partial sum
// (over [i, w]: the worker dim is a rank's one point) is still summed in
// chunks over its threads: a `partial` store, not one point per example.
// RUN: pdg-opt %s --pdg-split-over-workers=dim=b --pdg-plan-storage | filecheck %s

// CHECK-LABEL: pdg.graph @gradient
// CHECK: pdg.node "y" [i, w, b] {{.*}} {pdg.store = #pdg.store<partial, [1, 1, 1]>}
// CHECK: pdg.node "g_partial" [i, w]
// CHECK: pdg.all_reduce
pdg.graph @gradient {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  %x = pdg.input "x" : !pdg.value<[b], tensor<8xf32>>
  %w0 = pdg.input "w0" : !pdg.value<[], tensor<8xf32>>
  %wt = pdg.node "wt" [i] -> tensor<8xf32>
    case (i == 0) (%a = %w0[] : !pdg.value<[], tensor<8xf32>>) {
      pdg.yield %a : tensor<8xf32>
    }
    case (i >= 1) (%a = %wt[i - 1] : !pdg.value<[i], tensor<8xf32>>, %d = %g[i - 1] : !pdg.value<[i], tensor<8xf32>>) {
      %e = tensor.empty() : tensor<8xf32>
      %s = linalg.sub ins(%a, %d : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
      pdg.yield %s : tensor<8xf32>
    }
  %y = pdg.node "y" [i, b] (%xa = %x[b] : !pdg.value<[b], tensor<8xf32>>, %wa = %wt[i] : !pdg.value<[i], tensor<8xf32>>) -> tensor<8xf32> {
    %e = tensor.empty() : tensor<8xf32>
    %m = linalg.mul ins(%xa, %wa : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    pdg.yield %m : tensor<8xf32>
  }
  %g = pdg.node "g" [i] (%arg0 = %y[i, 0 : B] : !pdg.value<[i, b], tensor<8xf32>>) -> tensor<8xf32> {
    %0 = tensor.empty() : tensor<8xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<?x8xf32>) outs(%1 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.addf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<8xf32>
    pdg.yield %2 : tensor<8xf32>
  }
  pdg.output "wt" %wt : !pdg.value<[i], tensor<8xf32>>
}
