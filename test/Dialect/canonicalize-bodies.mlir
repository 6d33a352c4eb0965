// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization runs upstream patterns and folders inside node bodies.

// Upstream patterns and folders run inside node bodies too: dead
// arithmetic is removed.
// CHECK-LABEL: pdg.graph @bodies_are_folded {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
pdg.graph @bodies_are_folded {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %zero = arith.constant dense<0> : tensor<i32>
    %one = arith.constant dense<1> : tensor<i32>
    %dead = arith.addi %zero, %one : tensor<i32>
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
