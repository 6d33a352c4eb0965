// pdg-lower-to-loops refuses, at the value's location, what it cannot lower.
// RUN: not pdg-opt %s --split-input-file --pdg-lower-to-loops 2>&1 | FileCheck %s

// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: pdg-lower-to-loops: value 'a' has no pdg.store or pdg.schedule; run pdg-plan-storage and pdg-schedule before lowering
pdg.graph @unplanned {
  pdg.dim @t < 8
  %a = pdg.input "a" : !pdg.value<[t], tensor<f32>>
  pdg.output "a" %a : !pdg.value<[t], tensor<f32>>
}

// -----

// A constant dimension index outside the rank verifies but would abort an
// upstream folder: refused at the op (found by the fuzzer).
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 7]]:{{[0-9]+}}: error: pdg-lower-to-loops: tensor.dim takes dimension -1 of a rank-1 value; the index must be in 0..0
pdg.graph @bad_dim {
  pdg.dim @t < 8
  %a = pdg.input "a" {pdg.store = #pdg.store<input, [8]>} : !pdg.value<[t], tensor<4xf32>>
  %n = pdg.node "n" [t] (%x = %a[t] : !pdg.value<[t], tensor<4xf32>>) -> tensor<index>
      attributes {pdg.store = #pdg.store<full, [8]>, pdg.schedule = {phase = "loop", loops = ["t"], order = 1 : i64, stage = 0 : i64}} {
    %c = arith.constant -1 : index
    %d = tensor.dim %x, %c : tensor<4xf32>
    %r = tensor.from_elements %d : tensor<index>
    pdg.yield %r : tensor<index>
  }
  pdg.output "n" %n : !pdg.value<[t], tensor<index>>
}

// -----

// Index arithmetic is int64: constants beyond 2^62 in a case condition are
// refused (found by the fuzzer).
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: pdg-lower-to-loops: 'x' has an access or case condition with a constant beyond ±2^62; the lowering computes indices in int64
pdg.graph @huge {
  pdg.dim @t < 8
  %a = pdg.input "a" {pdg.store = #pdg.store<input, [8]>} : !pdg.value<[t], tensor<f32>>
  %x = pdg.node "x" [t] -> tensor<f32>
      attributes {pdg.store = #pdg.store<full, [8]>, pdg.schedule = {phase = "loop", loops = ["t"], order = 1 : i64, stage = 0 : i64}}
    case (t >= 9223372036854775807) (%v = %a[t] : !pdg.value<[t], tensor<f32>>) {
      pdg.yield %v : tensor<f32>
    }
  pdg.output "x" %x : !pdg.value<[t], tensor<f32>>
}

// -----

// A store too large for any memref (MLIR would assert computing its size):
// refused (found by the fuzzer).
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: pdg-lower-to-loops: the store of 'x' would hold 18446744073709551614 elements
pdg.graph @huge_store {
  pdg.dim @b < 9223372036854775807
  %x = pdg.input "x" {pdg.store = #pdg.store<input, [9223372036854775807]>} : !pdg.value<[b], tensor<2xf32>>
  pdg.output "x" %x : !pdg.value<[b], tensor<2xf32>>
}
