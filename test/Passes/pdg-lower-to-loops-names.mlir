// Graph, node, input and output names may hold any character: quotes,
// braces and line breaks are escaped in the lowered text (they broke its
// parse: an internal error, found by the fuzzer with an input named "a}").
// RUN: pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s

// The entry takes the graph's name as a C identifier; bodies keep theirs.
// CHECK-LABEL: func.func private @"g}\22\0Ah_x}\22\0Ay_0_into"(
// CHECK-LABEL: func.func @pdg_g___h(
// CHECK-SAME: %{{.*}}: memref<f32>, %{{.*}}: memref<f32>)
// CHECK: func.call @"g}\22\0Ah_x}\22\0Ay_0_into"(
pdg.graph @"g}\"\0Ah" {
  pdg.dim @t < 4
  %w = pdg.input "w}\"\0Aq" : !pdg.value<[], tensor<f32>>
  %v = pdg.input "w{" : !pdg.value<[], tensor<f32>>
  %x = pdg.node "x}\"\0Ay" [t] (%a = %w[] : !pdg.value<[], tensor<f32>>,
                                %b = %v[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    %s = arith.addf %a, %b : tensor<f32>
    pdg.yield %s : tensor<f32>
  }
  pdg.output "y}\"" %x : !pdg.value<[t], tensor<f32>>
}
