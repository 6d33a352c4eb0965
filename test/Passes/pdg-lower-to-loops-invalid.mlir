// pdg-lower-to-loops refuses, at the value's location, what it cannot lower.
// RUN: not pdg-opt %s --split-input-file --pdg-lower-to-loops 2>&1 | FileCheck %s

// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: pdg-lower-to-loops: value 'a' has no pdg.store or pdg.schedule; run pdg-plan-storage and pdg-schedule before lowering
pdg.graph @unplanned {
  pdg.dim @t < 8
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  pdg.output "a" %a : !pdg.value<[t], tensor<f32>>
}
