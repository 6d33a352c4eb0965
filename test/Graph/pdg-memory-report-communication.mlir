// --pdg-memory-report on a program with collectives: after the stores,
// each collective with the bytes each rank gives MPI over the run (its
// input point's bytes once per point of its value), as formulas of the
// symbols and evaluated, and their total.
// RUN: pdg-opt %s --pdg-plan-storage --pdg-memory-report --pdg-symbols I=10,W=2,B=4 | FileCheck %s
// RUN: pdg-opt %s --pdg-memory-report | FileCheck %s --check-prefix=FORMULA
// A program without collectives has no communication lines.
// RUN: pdg-opt %S/../../examples/decode_step.mlir --pdg-memory-report | FileCheck %s --check-prefix=NONE

// CHECK: memory report for @data_parallel (symbols: B=4, I=10, W=2)
// Each rank holds its own point along the worker dim: extent 1, not W.
// CHECK: g {{ +}}input {{ +}}[I, 1] {{ +}}2048 * I
// CHECK: s {{ +}}input {{ +}}[1, B] {{ +}}8 * B
// CHECK: peak:
// CHECK-NEXT: communication {{ +}}op {{ +}}extents {{ +}}bytes each rank gives MPI
// CHECK-NEXT: grad {{ +}}all_reduce {{ +}}[I] {{ +}}2048 * I {{ +}}20480
// CHECK-NEXT: first {{ +}}broadcast {{ +}}[B] {{ +}}8 * B {{ +}}32
// CHECK-NEXT: rows {{ +}}all_gather {{ +}}[B] {{ +}}8 * B {{ +}}32
// CHECK-NEXT: to MPI per rank: 16 * B + 2048 * I = 20544 bytes (0.020 MiB)

// FORMULA: grad {{ +}}all_reduce {{ +}}[I] {{ +}}2048 * I{{ *$}}
// FORMULA: to MPI per rank: 16 * B + 2048 * I{{$}}

// NONE-NOT: communication
// NONE-NOT: to MPI per rank
pdg.graph @data_parallel {
  pdg.dim @i < launch I
  pdg.dim @w < world W
  pdg.dim @b < launch B
  %g = pdg.input "g" : !pdg.value<[i, w], tensor<16x32xf32>>
  %s = pdg.input "s" : !pdg.value<[w, b], tensor<i64>>
  %sum = pdg.all_reduce sum %g over @w {name = "grad"} : !pdg.value<[i, w], tensor<16x32xf32>> -> !pdg.value<[i], tensor<16x32xf32>>
  %first = pdg.broadcast %s from 0 over @w {name = "first"} : !pdg.value<[w, b], tensor<i64>> -> !pdg.value<[b], tensor<i64>>
  %rows = pdg.all_gather %s over @w {name = "rows"} : !pdg.value<[w, b], tensor<i64>> -> !pdg.value<[b], tensor<?xi64>>
  pdg.output "grad" %sum : !pdg.value<[i], tensor<16x32xf32>>
  pdg.output "first" %first : !pdg.value<[b], tensor<i64>>
  pdg.output "rows" %rows : !pdg.value<[b], tensor<?xi64>>
}
