// --pdg-memory-report on a reduce-scatter and a shift: each gives MPI its
// input point once per point of its value, and their values are over the
// worker dim, where each rank computes its own point only (extent 1, not W).
// RUN: pdg-opt %s --pdg-plan-storage --pdg-memory-report --pdg-symbols W=2,M=3 | FileCheck %s
// RUN: pdg-opt %s --pdg-memory-report | FileCheck %s --check-prefix=FORMULA

// CHECK: memory report for @rankwise (symbols: M=3, W=2)
// CHECK: communication {{ +}}op {{ +}}extents {{ +}}bytes each rank gives MPI
// CHECK-NEXT: mine {{ +}}reduce_scatter{{ +}}[1] {{ +}}64 {{ +}}64
// CHECK-NEXT: prev {{ +}}shift {{ +}}[1, M] {{ +}}24 * M {{ +}}72
// CHECK-NEXT: to MPI per rank: 64 + 24 * M = 136 bytes

// FORMULA: mine {{ +}}reduce_scatter{{ +}}[1] {{ +}}64 {{ +}}64{{$}}
// FORMULA: prev {{ +}}shift {{ +}}[1, M] {{ +}}24 * M{{ *$}}
// FORMULA: to MPI per rank: 64 + 24 * M{{$}}
pdg.graph @rankwise {
  pdg.dim @w < world W
  pdg.dim @m < launch M
  %g = pdg.input "g" : !pdg.value<[w], tensor<2x8xf32>>
  %a = pdg.input "a" : !pdg.value<[w, m], tensor<3xf64>>
  %mine = pdg.reduce_scatter sum %g over @w {name = "mine"} : !pdg.value<[w], tensor<2x8xf32>> -> !pdg.value<[w], tensor<8xf32>>
  %prev = pdg.shift %a by 1 over @w {name = "prev"} : !pdg.value<[w, m], tensor<3xf64>> -> !pdg.value<[w, m], tensor<3xf64>>
  pdg.output "mine" %mine : !pdg.value<[w], tensor<8xf32>>
  pdg.output "prev" %prev : !pdg.value<[w, m], tensor<3xf64>>
}
