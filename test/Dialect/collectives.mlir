// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of the worker dim (`world W`) and the collectives over it.

// A gradient computed on each rank, summed over the ranks; a score's
// maximum; rank 0's weights on every rank; every rank's row, gathered.
// CHECK-LABEL: pdg.graph @data_parallel {
// CHECK-NEXT:    pdg.dim @w < world W
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    %g = pdg.input "g" : !pdg.value<[w], tensor<4x4xf32>>
// CHECK-NEXT:    %s = pdg.input "s" : !pdg.value<[w, b], tensor<i64>>
// CHECK-NEXT:    %grad = pdg.all_reduce sum %g over @w {name = "grad"} : !pdg.value<[w], tensor<4x4xf32>> -> !pdg.value<[], tensor<4x4xf32>>
// CHECK-NEXT:    %s_max = pdg.all_reduce max %s over @w : !pdg.value<[w, b], tensor<i64>> -> !pdg.value<[b], tensor<i64>>
// CHECK-NEXT:    %g_broadcast = pdg.broadcast %g from 0 over @w : !pdg.value<[w], tensor<4x4xf32>> -> !pdg.value<[], tensor<4x4xf32>>
// CHECK-NEXT:    %s_gathered = pdg.all_gather %s over @w : !pdg.value<[w, b], tensor<i64>> -> !pdg.value<[b], tensor<?xi64>>
// CHECK:       }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "data_parallel"}> ({
// GENERIC:         "pdg.dim"() <{bound = "W", kind = #pdg<bound launch>, sym_name = "w", worker}> : () -> ()
// GENERIC:         "pdg.all_reduce"(%{{.*}}) <{name = "grad", over = @w, reduction = #pdg<reduction sum>}>
// GENERIC:         "pdg.broadcast"(%{{.*}}) <{over = @w, root = 0 : i64}>
// GENERIC:         "pdg.all_gather"(%{{.*}}) <{over = @w}>
pdg.graph @data_parallel {
  pdg.dim @w < world W
  pdg.dim @b < launch B
  %g = pdg.input "g" : !pdg.value<[w], tensor<4x4xf32>>
  %s = pdg.input "s" : !pdg.value<[w, b], tensor<i64>>
  %sum = pdg.all_reduce sum %g over @w {name = "grad"} : !pdg.value<[w], tensor<4x4xf32>> -> !pdg.value<[], tensor<4x4xf32>>
  %max = pdg.all_reduce max %s over @w : !pdg.value<[w, b], tensor<i64>> -> !pdg.value<[b], tensor<i64>>
  %first = pdg.broadcast %g from 0 over @w : !pdg.value<[w], tensor<4x4xf32>> -> !pdg.value<[], tensor<4x4xf32>>
  %rows = pdg.all_gather %s over @w : !pdg.value<[w, b], tensor<i64>> -> !pdg.value<[b], tensor<?xi64>>
  pdg.output "grad" %sum : !pdg.value<[], tensor<4x4xf32>>
  pdg.output "max" %max : !pdg.value<[b], tensor<i64>>
  pdg.output "first" %first : !pdg.value<[], tensor<4x4xf32>>
  pdg.output "rows" %rows : !pdg.value<[b], tensor<?xi64>>
}

// A node over the worker dim reads values over it at its own rank's point,
// and values not over it (the same on every rank) anywhere; a world dim
// may have a max.
// CHECK-LABEL: pdg.graph @local_then_reduce {
// CHECK-NEXT:    pdg.dim @w < world W max 8
// CHECK:         %local = pdg.node "local" [w] (%{{.*}} = %x[w] : !pdg.value<[w], tensor<f32>>, %{{.*}} = %scale[] : !pdg.value<[], tensor<f32>>)
// CHECK:         %total = pdg.all_reduce sum %local over @w {name = "total"}
pdg.graph @local_then_reduce {
  pdg.dim @w < world W max 8
  %x = pdg.input "x" : !pdg.value<[w], tensor<f32>>
  %scale = pdg.input "scale" : !pdg.value<[], tensor<f32>>
  %local = pdg.node "local" [w] (%a0 = %x[w] : !pdg.value<[w], tensor<f32>>, %a1 = %scale[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    %p = arith.mulf %a0, %a1 : tensor<f32>
    pdg.yield %p : tensor<f32>
  }
  %total = pdg.all_reduce sum %local over @w {name = "total"} : !pdg.value<[w], tensor<f32>> -> !pdg.value<[], tensor<f32>>
  pdg.output "total" %total : !pdg.value<[], tensor<f32>>
}
