// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// Round trip of the standalone #pdg.access attribute.

// #pdg.access on its own binds dims and symbols positionally, whatever their
// names; it prints with d0.. and s0... Attached here as discardable
// attributes. The standalone attribute does not check affinity: the ops that
// use an access do.
// CHECK-LABEL: pdg.graph @standalone_access
// CHECK-SAME:    pdg.point_access = #pdg.access<(d0, d1) : [d0, d1 - 1]>
// CHECK-SAME:    pdg.semi_affine = #pdg.access<(d0, d1)[s0] : [d0 * d1, d1 floordiv s0 : s0]>
// CHECK-SAME:    pdg.window = #pdg.access<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>
// CHECK:         %x = pdg.input "x" {pdg.empty = #pdg.access<() : []>, pdg.no_symbols = #pdg.access<(d0) : [d0]>} : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    pdg.output "x" %x {pdg.sliced = #pdg.access<(d0)[s0, s1] : [max(0, s1) : min(d0 + 1, s0)]>} : !pdg.value<[t], tensor<f32>>
pdg.graph @standalone_access attributes {
    pdg.window = #pdg.access<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>,
    pdg.point_access = #pdg.access<(b, t) : [b, t - 1]>,
    pdg.semi_affine = #pdg.access<(i, j)[N] : [i * j, j floordiv N : N]>} {
  pdg.dim @t < 8
  %x = pdg.input "x" {pdg.no_symbols = #pdg.access<(d0)[] : [d0]>, pdg.empty = #pdg.access<() : []>} : !pdg.value<[t], tensor<f32>>
  pdg.output "x" %x {pdg.sliced = #pdg.access<(x)[A, B] : [max(0, B) : min(x + 1, A)]>} : !pdg.value<[t], tensor<f32>>
}
