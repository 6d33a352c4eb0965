// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization removes constraints that always hold and repeated constraints.

// Constraints that always hold and repeated constraints are removed.
// CHECK-LABEL: pdg.graph @simplify_conditions {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (t <= 3) {
// CHECK:           case (t >= 0) {
// CHECK:           default {
pdg.graph @simplify_conditions {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t <= 3, t <= 3) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 0, 3 >= 2) {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default {
      %c = arith.constant dense<3.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
