// RUN: pdg-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: pdg-opt %s --split-input-file --canonicalize --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: pdg-opt %s --split-input-file --canonicalize | pdg-opt --split-input-file --canonicalize | FileCheck %s
// Canonicalization drops unused node inputs and then the symbols no longer used.

// Inputs whose block argument is unused are dropped, in every case.
// CHECK-LABEL: pdg.graph @drop_unused_inputs {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %b[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %z = pdg.node "z" [t] -> tensor<f32>
// CHECK-NEXT:      case (t == 0) {
// CHECK-NEXT:        %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:        pdg.yield %[[C]] : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      default (%arg0 = %a[t] : !pdg.value<[t], tensor<f32>>) {
// CHECK-NEXT:        pdg.yield %arg0 : tensor<f32>
// CHECK-NEXT:      }
pdg.graph @drop_unused_inputs {
  pdg.dim @t < 8
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  %b = pdg.input "b" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%u = %a[t] : !pdg.value<[t], tensor<f32>>, %v = %b[t] : !pdg.value<[t], tensor<f32>>, %w = %a[0 : 8] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %z = pdg.node "z" [t] -> tensor<f32>
    case (t == 0) (%u = %a[t] : !pdg.value<[t], tensor<f32>>) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%u = %b[t] : !pdg.value<[t], tensor<f32>>, %v = %a[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
  pdg.output "z" %z : !pdg.value<[t], tensor<f32>>
}

// -----

// Once the only input that mentions a symbol is gone, the symbol is pruned;
// symbols still used (here by a condition) stay.
// CHECK-LABEL: pdg.graph @prune_symbols {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK:         %z = pdg.node "z" [t] -> tensor<f32>
// CHECK-NEXT:      case (t >= T - 1) {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "prune_symbols"}> ({
// GENERIC:         "pdg.node"(%{{.*}}) <{accesses = [#pdg.access<(d0) : [d0]>], conditions = [#{{.*}}], name = "y", symbols = []}>
// GENERIC:         "pdg.node"(%{{.*}}) <{accesses = [#pdg.access<(d0)[s0] : [d0]>], conditions = [#{{.*}}, #{{.*}}], name = "z", symbols = ["T"]}>
pdg.graph @prune_symbols {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%all = %x[0 : T] : !pdg.value<[t], tensor<f32>>, %v = %x[t] : !pdg.value<[t], tensor<f32>>, %w = %x[max(0, B - 1) : B] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %z = pdg.node "z" [t] -> tensor<f32>
    case (t >= T - 1) (%w = %x[0 : B] : !pdg.value<[t], tensor<f32>>) {
      %c = arith.constant dense<0.0> : tensor<f32>
      pdg.yield %c : tensor<f32>
    }
    default (%v = %x[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
  pdg.output "z" %z : !pdg.value<[t], tensor<f32>>
}
