// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of case conditions: normalization of comparisons, conjunctions, symbols.

// Conditions are normalized and printed with positive coefficients on each
// side: `<` and `>` become `<=` and `>=`, constants move to the right.
// CHECK-LABEL: pdg.graph @condition_syntax {
// CHECK:         %c = pdg.node "c" [b, t] -> tensor<i32>
// CHECK-NEXT:      case (t <= 7, b >= 1) {
// CHECK:           case (t * 2 >= b - 1) {
// CHECK:           case (t == b + 3) {
// CHECK:           case (B >= t) {
// CHECK:           case (t mod 2 == 0, b + t <= 3) {
// CHECK:           case ((t floordiv 4) * 4 == t - 2) {
// CHECK:           case (t >= B - 1, b >= 0) {
// CHECK:           default {
// CHECK-NEXT:        %[[D:.*]] = arith.constant dense<7> : tensor<i32>
// CHECK-NEXT:        pdg.yield %[[D]] : tensor<i32>
// CHECK-NEXT:      }
// CHECK-NEXT:    pdg.output "c" %c : !pdg.value<[b, t], tensor<i32>>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "condition_syntax"}> ({
// GENERIC:         "pdg.node"() <{accesses = [], conditions = [{{.*}}], name = "c", symbols = ["B"]}> ({
pdg.graph @condition_syntax {
  pdg.dim @b < launch B
  pdg.dim @t < 16
  %c = pdg.node "c" [b, t] -> tensor<i32>
    case (t < 8, b > 0) {
      %v = arith.constant dense<0> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (2 * t + 1 >= b) {
      %v = arith.constant dense<1> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t - b == 3) {
      %v = arith.constant dense<2> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t <= B) {
      %v = arith.constant dense<3> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t mod 2 == 0, b + t <= 3) {
      %v = arith.constant dense<4> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case ((t floordiv 4) * 4 == t - 2) {
      %v = arith.constant dense<5> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    case (t + 1 >= B, 0 <= b) {
      %v = arith.constant dense<6> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
    default {
      %v = arith.constant dense<7> : tensor<i32>
      pdg.yield %v : tensor<i32>
    }
  pdg.output "c" %c : !pdg.value<[b, t], tensor<i32>>
}
