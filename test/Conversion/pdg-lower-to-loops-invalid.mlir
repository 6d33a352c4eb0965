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
// refused (found by the fuzzer). The node's verifier refuses them now,
// before any pass; the lowering's own check stays behind it.
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'pdg.node' op condition of case #0 holds the constant -9223372036854775807, beyond +-2^62
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

// -----

// A hand-written partial store whose reader is not a sum (a max): refused
// rather than lowered as one.
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 9]]:{{[0-9]+}}: error: pdg-lower-to-loops: 'e' has a partial store, but its only reader must be one node that sums it over its parallel dims; plan the storage again (pdg-plan-storage)
pdg.graph @partial_of_a_max {
  pdg.dim @i < launch I
  pdg.dim @b < launch B
  %x = pdg.input "x" {pdg.store = #pdg.store<input, [B]>} : !pdg.value<[b], tensor<4xf32>>
  %w = pdg.node "w" [i] (%a = %x[0] : !pdg.value<[b], tensor<4xf32>>) -> tensor<4xf32>
      attributes {pdg.schedule = {group = 1 : i64, loops = ["i"], order = 1 : i64, phase = "loop", stage = 0 : i64}, pdg.store = #pdg.store<full, [I]>} {
    pdg.yield %a : tensor<4xf32>
  }
  %e = pdg.node "e" [i, b] (%a = %x[b] : !pdg.value<[b], tensor<4xf32>>, %v = %w[i] : !pdg.value<[i], tensor<4xf32>>) -> tensor<4xf32>
      attributes {pdg.schedule = {group = 1 : i64, loops = ["i"], order = 2 : i64, phase = "loop", stage = 1 : i64}, pdg.store = #pdg.store<partial, [1, 1]>} {
    %0 = arith.mulf %a, %v : tensor<4xf32>
    pdg.yield %0 : tensor<4xf32>
  }
  %m = pdg.node "m" [i] (%a = %e[i, 0 : B] : !pdg.value<[i, b], tensor<4xf32>>) -> tensor<4xf32>
      attributes {pdg.schedule = {group = 1 : i64, loops = ["i"], order = 3 : i64, phase = "loop", stage = 2 : i64}, pdg.store = #pdg.store<full, [I]>} {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4xf32>) -> tensor<4xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %3 = arith.maximumf %in, %out : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    pdg.yield %2 : tensor<4xf32>
  }
  pdg.output "m" %m : !pdg.value<[i], tensor<4xf32>>
}

// -----

// Two graphs whose names differ only in characters a C identifier cannot
// hold would define one entry symbol (an internal error before).
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 6]]:1: error: pdg-lower-to-loops: graphs 'a}b' and 'a{b' would both be compiled to the C symbol pdg_a_b; rename one
pdg.graph @"a}b" {
  pdg.dim @t < 8
  %a = pdg.input "a" {pdg.store = #pdg.store<input, [8]>} : !pdg.value<[t], tensor<f32>>
}

pdg.graph @"a{b" {
  pdg.dim @t < 8
  %a = pdg.input "a" {pdg.store = #pdg.store<input, [8]>} : !pdg.value<[t], tensor<f32>>
}

// -----

// A graph whose entry would be a symbol of pdg's runtime (its step
// counter, pdg_step: an internal error before).
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 1]]:1: error: pdg-lower-to-loops: graph 'step' would be compiled to the C symbol pdg_step, which pdg's runtime defines; rename the graph
pdg.graph @step {
  pdg.dim @t < 8
  %a = pdg.input "a" {pdg.store = #pdg.store<input, [8]>} : !pdg.value<[t], tensor<f32>>
}

// -----

// A free written in a function of the module: the lowering frees every
// buffer itself, and upstream's deallocation fails on it (found by the
// fuzzer).
// CHECK: pdg-lower-to-loops-invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: pdg-lower-to-loops: memref.dealloc in a function of the module: the lowering places every free itself (buffer deallocation); remove it
func.func @frees(%n: index) {
  %m = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  return
}
