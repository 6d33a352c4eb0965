// RUN: pdg-opt %s --split-input-file --pdg-plan-storage --pdg-schedule --pdg-lower-to-loops | FileCheck %s
// Inputs the mutation fuzzer found crashing pdg-opt's lowering mode
// (tools/fuzz_pdg_opt.py, minimized); each must now lower.

// Seed 4: an input named "a}" became the SSA name %in_a} in the driver's
// text, which then failed to parse (an internal error).
// CHECK-LABEL: func.func @pdg_callback(
// CHECK-SAME: %{{.*}}: memref<f32>)
pdg.graph @callback {
  pdg.dim @t < dynamic T until %stop : !pdg.value<[t], tensor<i1>>
  %a = pdg.input "a}" : !pdg.value<[], tensor<f32>>
  %x = pdg.node [t] (%v = %a[] : !pdg.value<[], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %stop = pdg.udf "done" [t] (%x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<i1>
}

// -----

// Seeds 4 and 6: a reduction on buffers (no results) aborted
// pdg-interchange-reductions in the bodies' pipeline.
// CHECK-LABEL: func.func @weight_gradient(
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @weight_gradient(%x: memref<?x130xf32, strided<[?, ?], offset: ?>>, %g: memref<?x64xf32, strided<[?, ?], offset: ?>>, %w: memref<130x64xf32, strided<[?, ?], offset: ?>>) {
  linalg.generic {indexing_maps = [#map, #map, #map1], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x, %g : memref<?x130xf32, strided<[?, ?], offset: ?>>, memref<?x64xf32, strided<[?, ?], offset: ?>>) outs(%w : memref<130x64xf32, strided<[?, ?], offset: ?>>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
