// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// A recurrence in a `default` case after a base case `case (t == 0)` is valid (known verifier false positive).
//
// BUG: "At a point, the first case whose condition holds defines the value",
// so the `default` case below only runs at t >= 1 and its read of y[t - 1]
// is always inside the domain. The verifier looks at each case's own
// condition only and rejects the node with the misleading "recurrence without
// a base case: case #1 reads 'y'[t - 1], which is outside the domain when
// t < 1; ... define t < 1 in another case, e.g. case (t == 0)" although case
// account (or delete this test if the restriction is intended, and reword the
// message).

// CHECK-LABEL: pdg.graph @default_recurrence {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) {
// CHECK:           default (%arg0 = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
pdg.graph @default_recurrence {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) (%a = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    default (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
