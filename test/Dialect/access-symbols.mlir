// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of accesses that use the bound symbols of launch and dynamic dims.

// Symbols: the bound names of launch and dynamic dims may appear in
// accesses. The node's symbols are sorted by name, whatever the order they
// first appear in (T here, then B).
// CHECK-LABEL: pdg.graph @symbols {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    pdg.dim @t < dynamic T max 128 until %stop : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
// CHECK-NEXT:    %stop = pdg.input "stop" : !pdg.value<[t], tensor<i1>>
// CHECK-NEXT:    %y = pdg.node "y" [] (%arg0 = %stop[T - 1] : !pdg.value<[t], tensor<i1>>, %arg1 = %x[0 : B, 0 : T] : !pdg.value<[b, t], tensor<f32>>, %arg2 = %x[B - 1, T - 1] : !pdg.value<[b, t], tensor<f32>>, %arg3 = %x[0 : B, max(0, T - 4) : T] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg2 : tensor<f32>
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "symbols"}> ({
// GENERIC:         "pdg.node"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{accesses = [#pdg.access<()[s0, s1] : [s1 - 1]>, #pdg.access<()[s0, s1] : [0 : s0, 0 : s1]>, #pdg.access<()[s0, s1] : [s0 - 1, s1 - 1]>, #pdg.access<()[s0, s1] : [0 : s0, max(0, s1 - 4) : s1]>], conditions = [#{{.*}}], name = "y", symbols = ["B", "T"]}>
// GENERIC-NEXT:    ^bb0(%{{.*}}: tensor<i1>, %{{.*}}: tensor<?x?xf32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<?x?xf32>):
pdg.graph @symbols {
  pdg.dim @b < launch B
  pdg.dim @t < dynamic T max 128 until %stop : !pdg.value<[t], tensor<i1>>
  %x = pdg.input "x" : !pdg.value<[b, t], tensor<f32>>
  %stop = pdg.input "stop" : !pdg.value<[t], tensor<i1>>
  %y = pdg.node "y" [] (%end = %stop[T - 1] : !pdg.value<[t], tensor<i1>>, %all = %x[0 : B, 0 : T] : !pdg.value<[b, t], tensor<f32>>, %last = %x[B - 1, T - 1] : !pdg.value<[b, t], tensor<f32>>, %tail = %x[0 : B, max(0, T - 4) : T] : !pdg.value<[b, t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %last : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[], tensor<f32>>
}
