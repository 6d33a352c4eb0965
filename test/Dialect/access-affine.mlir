// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of quasi-affine point accesses: floordiv, mod, ceildiv, products with constants, folding, negations.

// Quasi-affine points: floordiv, mod, ceildiv by positive constants,
// products with constants, later points, and sums of dims. Expressions are
// printed in MLIR's canonical order (`2 * t` prints as `t * 2`); nested
// products and quotients are parenthesized.
// CHECK-LABEL: pdg.graph @quasi_affine {
// CHECK:         %y = pdg.node "y" [b, t] (%arg0 = %x[(t floordiv 16) * 16] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[t mod 4] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[t ceildiv 2] : !pdg.value<[t], tensor<f32>>, %arg3 = %x[t * 2] : !pdg.value<[t], tensor<f32>>, %arg4 = %x[t + 1] : !pdg.value<[t], tensor<f32>>, %arg5 = %x[b * 4 + t] : !pdg.value<[t], tensor<f32>>, %arg6 = %x[-t + 63] : !pdg.value<[t], tensor<f32>>, %arg7 = %x[(t + 1) floordiv 2] : !pdg.value<[t], tensor<f32>>, %arg8 = %x[(t mod 4) * 2] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "quasi_affine"}> ({
// GENERIC:         accesses = [#pdg.access<(d0, d1) : [(d1 floordiv 16) * 16]>, #pdg.access<(d0, d1) : [d1 mod 4]>, #pdg.access<(d0, d1) : [d1 ceildiv 2]>, #pdg.access<(d0, d1) : [d1 * 2]>, #pdg.access<(d0, d1) : [d1 + 1]>, #pdg.access<(d0, d1) : [d0 * 4 + d1]>, #pdg.access<(d0, d1) : [-d1 + 63]>, #pdg.access<(d0, d1) : [(d1 + 1) floordiv 2]>, #pdg.access<(d0, d1) : [(d1 mod 4) * 2]>]
pdg.graph @quasi_affine {
  pdg.dim @b < 4
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [b, t] (%a0 = %x[(t floordiv 16) * 16] : !pdg.value<[t], tensor<f32>>, %a1 = %x[t mod 4] : !pdg.value<[t], tensor<f32>>, %a2 = %x[t ceildiv 2] : !pdg.value<[t], tensor<f32>>, %a3 = %x[2 * t] : !pdg.value<[t], tensor<f32>>, %a4 = %x[t + 1] : !pdg.value<[t], tensor<f32>>, %a5 = %x[4 * b + t] : !pdg.value<[t], tensor<f32>>, %a6 = %x[63 - t] : !pdg.value<[t], tensor<f32>>, %a7 = %x[(t + 1) floordiv 2] : !pdg.value<[t], tensor<f32>>, %a8 = %x[t mod 4 * 2] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a0 : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[b, t], tensor<f32>>
}

// Expressions are folded as they are parsed.
// CHECK-LABEL: pdg.graph @folded {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[0] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[6] : !pdg.value<[t], tensor<f32>>, %arg3 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @folded {
  pdg.dim @t < 64
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[t - 2 * 3 + 6] : !pdg.value<[t], tensor<f32>>, %b = %x[t - t] : !pdg.value<[t], tensor<f32>>, %c = %x[(2 + 1) * 2] : !pdg.value<[t], tensor<f32>>, %d = %x[t floordiv 1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}

// Negative constants and negated sums print back in a form that parses to the
// same expression.
// CHECK-LABEL: pdg.graph @negatives {
// CHECK:         %y = pdg.node "y" [t] (%arg0 = %x[-(t - 5)] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[-t : 1] : !pdg.value<[t], tensor<f32>>, %arg2 = %x[t - 7 : -t + 9] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
pdg.graph @negatives {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %y = pdg.node "y" [t] (%a = %x[-(t - 5)] : !pdg.value<[t], tensor<f32>>, %b = %x[-t : 1] : !pdg.value<[t], tensor<f32>>, %c = %x[t - 7 : 9 - t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %a : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
