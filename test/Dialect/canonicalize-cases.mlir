// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization drops cases that never hold or are shadowed, but keeps a node's only case.

// A case whose condition can never hold is dropped, and with it its inputs.
// CHECK-LABEL: pdg.graph @drop_false_case {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) {
// CHECK:           case (t >= 1) (%arg0 = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
pdg.graph @drop_false_case {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] -> tensor<f32>
    case (t == 0) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= t + 1) (%a = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (1 == 0) {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    case (t >= 1) (%p = %y[t - 1] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %p : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// -----

// Cases after an always-true case (`default`, or a condition that folds to
// true) are never chosen and are dropped; a single remaining always-true
// case prints in the short form.
// CHECK-LABEL: pdg.graph @drop_shadowed_cases {
// CHECK:         %a = pdg.node "a" [t] -> tensor<f32>
// CHECK-NEXT:      case (t <= 3) {
// CHECK-NEXT:        %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:        pdg.yield %[[C]] : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    %b = pdg.node "b" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    pdg.output "a" %a : !pdg.value<[t], tensor<f32>>
pdg.graph @drop_shadowed_cases {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %a = pdg.node "a" [t] -> tensor<f32>
    case (t <= 3) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 5) (%v = %x[0] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    default {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  %b = pdg.node "b" [t] -> tensor<f32>
    case (3 >= 2, t - t == 0) (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
    case (t >= 5) {
      %c = arith.constant dense<2.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  pdg.output "a" %a : !pdg.value<[t], tensor<f32>>
  pdg.output "b" %b : !pdg.value<[t], tensor<f32>>
}

// -----

// A single case that can never hold is kept: a node needs a case.
// CHECK-LABEL: pdg.graph @keep_only_case {
// CHECK:         %y = pdg.node "y" [t] -> tensor<f32>
// CHECK-NEXT:      case (0 == -1) {
pdg.graph @keep_only_case {
  pdg.dim @t < 8
  %y = pdg.node "y" [t] -> tensor<f32>
    case (1 == 0) {
      %c = arith.constant dense<1.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
