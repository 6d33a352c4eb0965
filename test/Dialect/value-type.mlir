// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// Round trip of !pdg.value: domains, point types, type aliases.

// !pdg.value: an empty domain (one point), scalars, ranked and dynamic point
// tensors, and dims listed in any order.
// CHECK-LABEL: pdg.graph @value_types {
// CHECK-NEXT:    pdg.dim @b < 4
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %scalar = pdg.input "scalar" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    %matrix = pdg.input "matrix" : !pdg.value<[], tensor<1024x256xbf16>>
// CHECK-NEXT:    %ragged = pdg.input "ragged" : !pdg.value<[b], tensor<?x16xi8>>
// CHECK-NEXT:    %tb = pdg.input "tb" : !pdg.value<[t, b], tensor<2x3xi64>>
// CHECK-NEXT:  }
pdg.graph @value_types {
  pdg.dim @b < 4
  pdg.dim @t < 8
  %scalar = pdg.input "scalar" : !pdg.value<[], tensor<f32>>
  %matrix = pdg.input "matrix" : !pdg.value<[], tensor<1024x256xbf16>>
  %ragged = pdg.input "ragged" : !pdg.value<[b], tensor<?x16xi8>>
  %tb = pdg.input "tb" : !pdg.value<[t, b], tensor<2x3xi64>>
}

// Type aliases of !pdg.value are expanded when printing.
!vec = !pdg.value<[t], tensor<32xf32>>
// CHECK-LABEL: pdg.graph @type_alias {
// CHECK-NEXT:    pdg.dim @t < 8
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<32xf32>>
// CHECK-NEXT:    pdg.output "x" %x : !pdg.value<[t], tensor<32xf32>>
// CHECK-NEXT:  }
pdg.graph @type_alias {
  pdg.dim @t < 8
  %x = pdg.input "x" : !vec
  pdg.output "x" %x : !vec
}
