// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of the collectives that give each rank a point of its own
// (their result keeps the input's domain, worker dim included).

// Each rank's block of the summed gradient (a leading dim of W blocks, `?`
// or a size); the maximum's block; the point of the rank before (a
// pipeline's hand-off) and of the rank after.
// CHECK-LABEL: pdg.graph @rankwise {
// CHECK-NEXT:    pdg.dim @w < world W
// CHECK-NEXT:    pdg.dim @m < launch M
// CHECK-NEXT:    %g = pdg.input "g" : !pdg.value<[w], tensor<2x8xf32>>
// CHECK-NEXT:    %h = pdg.input "h" : !pdg.value<[w, m], tensor<?x3xi64>>
// CHECK-NEXT:    %mine = pdg.reduce_scatter sum %g over @w {name = "mine"} : !pdg.value<[w], tensor<2x8xf32>> -> !pdg.value<[w], tensor<8xf32>>
// CHECK-NEXT:    %h_scattered = pdg.reduce_scatter max %h over @w : !pdg.value<[w, m], tensor<?x3xi64>> -> !pdg.value<[w, m], tensor<3xi64>>
// CHECK-NEXT:    %g_shifted = pdg.shift %g by 1 over @w : !pdg.value<[w], tensor<2x8xf32>> -> !pdg.value<[w], tensor<2x8xf32>>
// CHECK-NEXT:    %back = pdg.shift %h by -1 over @w {name = "back"} : !pdg.value<[w, m], tensor<?x3xi64>> -> !pdg.value<[w, m], tensor<?x3xi64>>
// CHECK:       }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "rankwise"}> ({
// GENERIC:         "pdg.reduce_scatter"(%{{.*}}) <{name = "mine", over = @w, reduction = #pdg<reduction sum>}>
// GENERIC:         "pdg.reduce_scatter"(%{{.*}}) <{over = @w, reduction = #pdg<reduction max>}>
// GENERIC:         "pdg.shift"(%{{.*}}) <{by = 1 : i64, over = @w}>
// GENERIC:         "pdg.shift"(%{{.*}}) <{by = -1 : i64, name = "back", over = @w}>
pdg.graph @rankwise {
  pdg.dim @w < world W
  pdg.dim @m < launch M
  %g = pdg.input "g" : !pdg.value<[w], tensor<2x8xf32>>
  %h = pdg.input "h" : !pdg.value<[w, m], tensor<?x3xi64>>
  %mine = pdg.reduce_scatter sum %g over @w {name = "mine"} : !pdg.value<[w], tensor<2x8xf32>> -> !pdg.value<[w], tensor<8xf32>>
  %top = pdg.reduce_scatter max %h over @w : !pdg.value<[w, m], tensor<?x3xi64>> -> !pdg.value<[w, m], tensor<3xi64>>
  %next = pdg.shift %g by 1 over @w : !pdg.value<[w], tensor<2x8xf32>> -> !pdg.value<[w], tensor<2x8xf32>>
  %back = pdg.shift %h by -1 over @w {name = "back"} : !pdg.value<[w, m], tensor<?x3xi64>> -> !pdg.value<[w, m], tensor<?x3xi64>>
  pdg.output "mine" %mine : !pdg.value<[w], tensor<8xf32>>
  pdg.output "top" %top : !pdg.value<[w, m], tensor<3xi64>>
  pdg.output "next" %next : !pdg.value<[w], tensor<2x8xf32>>
  pdg.output "back" %back : !pdg.value<[w, m], tensor<?x3xi64>>
}
