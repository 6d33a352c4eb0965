// pdg-lower-to-loops refuses, at the value's location, what it cannot lower
// in a planned and scheduled graph.
// RUN: not pdg-opt %s --split-input-file --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops 2>&1 | FileCheck %s

// An input over a dynamic dim: inputs are given whole before the run, but
// the dim's length is found while it runs (the interpreter refuses it too).
// CHECK: pdg-lower-to-loops-invalid-planned.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: pdg-lower-to-loops: input 'a' is over dynamic dim 't', whose length is only found while the program runs; define it over static or launch dims and read it from a node over 't'
pdg.graph @dynamic_input {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 64 until %stop : !pdg.value<[b, t], tensor<i1>>
  %a = pdg.input "a" : !pdg.value<[b, t], tensor<f32>>
  %stop = pdg.node "stop" [b, t] (%x = %a[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<i1> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<i1>
    %r = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
        ins(%x : tensor<f32>) outs(%e : tensor<i1>) {
    ^bb0(%v: f32, %o: i1):
      %c = arith.cmpf ogt, %v, %z : f32
      linalg.yield %c : i1
    } -> tensor<i1>
    pdg.yield %r : tensor<i1>
  }
  pdg.output "stop" %stop : !pdg.value<[b, t], tensor<i1>>
}
