// A udf (a Python callback) cannot be compiled yet: the error says where and
// what to do instead.
// RUN: not pdg-opt %s --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops 2>&1 | FileCheck %s

// CHECK: pdg-lower-to-loops-udf.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: pdg-lower-to-loops: udf 'reward' cannot be compiled yet: the compiled path runs pdg.node only; run this program with `pdg run --interpret`
pdg.graph @callback {
  pdg.dim @t < 8
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  %r = pdg.udf "reward" [t] (%a[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
  pdg.output "r" %r : !pdg.value<[t], tensor<f32>>
}
