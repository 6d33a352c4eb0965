// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of pdg.udf (host callbacks): no inputs, slices up to launch bounds, one callee called twice.

// A udf without inputs; its result is named after the callee.
// CHECK-LABEL: pdg.graph @udf_no_inputs {
// CHECK-NEXT:    pdg.dim @b < 4
// CHECK-NEXT:    %seed = pdg.udf "seed" [b] -> tensor<i64>
// CHECK-NEXT:    pdg.output "seed" %seed : !pdg.value<[b], tensor<i64>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "udf_no_inputs"}> ({
// GENERIC:         "pdg.udf"() <{accesses = [], callee = "seed", symbols = []}> : () -> !pdg.value<[b], tensor<i64>>
pdg.graph @udf_no_inputs {
  pdg.dim @b < 4
  %s = pdg.udf "seed" [b] -> tensor<i64>
  pdg.output "seed" %s : !pdg.value<[b], tensor<i64>>
}

// A udf reading a whole sequence (a slice up to a launch bound) per batch
// row, and a weight at no point: the reward example of the dialect docs.
// CHECK-LABEL: pdg.graph @udf_reward {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    pdg.dim @t < launch T
// CHECK-NEXT:    %tok = pdg.input "tok" : !pdg.value<[b, t], tensor<i64>>
// CHECK-NEXT:    %scale = pdg.input "scale" : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:    %reward = pdg.udf "reward" [b] (%tok[b, 0 : T] : !pdg.value<[b, t], tensor<i64>>, %scale[] : !pdg.value<[], tensor<f32>>) -> tensor<f32>
// CHECK-NEXT:    pdg.output "reward" %reward : !pdg.value<[b], tensor<f32>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "udf_reward"}> ({
// GENERIC:         "pdg.udf"(%{{.*}}, %{{.*}}) <{accesses = [#pdg.access<(d0)[s0] : [d0, 0 : s0]>, #pdg.access<(d0)[s0] : []>], callee = "reward", symbols = ["T"]}> : (!pdg.value<[b, t], tensor<i64>>, !pdg.value<[], tensor<f32>>) -> !pdg.value<[b], tensor<f32>>
pdg.graph @udf_reward {
  pdg.dim @b < launch B
  pdg.dim @t < launch T
  %tok = pdg.input "tok" : !pdg.value<[b, t], tensor<i64>>
  %scale = pdg.input "scale" : !pdg.value<[], tensor<f32>>
  %r = pdg.udf "reward" [b] (%tok[b, 0 : T] : !pdg.value<[b, t], tensor<i64>>, %scale[] : !pdg.value<[], tensor<f32>>) -> tensor<f32>
  pdg.output "reward" %r : !pdg.value<[b], tensor<f32>>
}

// The same callee may be called by several udfs; the printer disambiguates
// their SSA names.
// CHECK-LABEL: pdg.graph @udf_same_callee {
// CHECK-NEXT:    pdg.dim @t < 2
// CHECK-NEXT:    %f = pdg.udf "f" [t] -> tensor<f32>
// CHECK-NEXT:    %f_0 = pdg.udf "f" [] (%f[1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
// CHECK-NEXT:    pdg.output "out" %f_0 : !pdg.value<[], tensor<f32>>
// CHECK-NEXT:  }
pdg.graph @udf_same_callee {
  pdg.dim @t < 2
  %a = pdg.udf "f" [t] -> tensor<f32>
  %b = pdg.udf "f" [] (%a[1] : !pdg.value<[t], tensor<f32>>) -> tensor<f32>
  pdg.output "out" %b : !pdg.value<[], tensor<f32>>
}
