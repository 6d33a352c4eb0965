// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of pdg.input, pdg.output and pdg.udf (host callbacks).

// Inputs and outputs; the SSA names printed come from the program's names.
// CHECK-LABEL: pdg.graph @io {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    %wte = pdg.input "wte" : !pdg.value<[], tensor<64x32xf32>>
// CHECK-NEXT:    %prompt = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
// CHECK-NEXT:    pdg.output "embedding" %wte : !pdg.value<[], tensor<64x32xf32>>
// CHECK-NEXT:    pdg.output "prompt_again" %prompt : !pdg.value<[b], tensor<i64>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "io"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{bound = "B", kind = #pdg<bound launch>, sym_name = "b"}> : () -> ()
// GENERIC-NEXT:    %[[WTE:.*]] = "pdg.input"() <{name = "wte"}> : () -> !pdg.value<[], tensor<64x32xf32>>
// GENERIC-NEXT:    %[[PROMPT:.*]] = "pdg.input"() <{name = "prompt"}> : () -> !pdg.value<[b], tensor<i64>>
// GENERIC-NEXT:    "pdg.output"(%[[WTE]]) <{name = "embedding"}> : (!pdg.value<[], tensor<64x32xf32>>) -> ()
// GENERIC-NEXT:    "pdg.output"(%[[PROMPT]]) <{name = "prompt_again"}> : (!pdg.value<[b], tensor<i64>>) -> ()
// GENERIC-NEXT:  }) : () -> ()
pdg.graph @io {
  pdg.dim @b < launch B
  %w = pdg.input "wte" : !pdg.value<[], tensor<64x32xf32>>
  %p = pdg.input "prompt" : !pdg.value<[b], tensor<i64>>
  pdg.output "embedding" %w : !pdg.value<[], tensor<64x32xf32>>
  pdg.output "prompt_again" %p : !pdg.value<[b], tensor<i64>>
}

// Names that are not valid SSA identifiers are sanitized by the printer;
// one value may be output under several names; input and output names live
// in separate namespaces.
// CHECK-LABEL: pdg.graph @io_names {
// CHECK-NEXT:    %layer_0.w = pdg.input "layer 0.w" : !pdg.value<[], tensor<4xf32>>
// CHECK-NEXT:    pdg.output "layer 0.w" %layer_0.w : !pdg.value<[], tensor<4xf32>>
// CHECK-NEXT:    pdg.output "copy" %layer_0.w : !pdg.value<[], tensor<4xf32>>
// CHECK-NEXT:  }
pdg.graph @io_names {
  %w = pdg.input "layer 0.w" : !pdg.value<[], tensor<4xf32>>
  pdg.output "layer 0.w" %w : !pdg.value<[], tensor<4xf32>>
  pdg.output "copy" %w : !pdg.value<[], tensor<4xf32>>
}

// Discardable attributes on inputs and outputs go before the colon.
// CHECK-LABEL: pdg.graph @io_attrs {
// CHECK-NEXT:    %w = pdg.input "w" {pdg.dtype = "bf16"} : !pdg.value<[], tensor<8xf32>>
// CHECK-NEXT:    pdg.output "w" %w {pdg.keep} : !pdg.value<[], tensor<8xf32>>
// CHECK-NEXT:  }
pdg.graph @io_attrs {
  %w = pdg.input "w" {pdg.dtype = "bf16"} : !pdg.value<[], tensor<8xf32>>
  pdg.output "w" %w {pdg.keep} : !pdg.value<[], tensor<8xf32>>
}

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

// A udf with discardable attributes (no `attributes` keyword), reading an
// fixed point of a node and a window of the same node; a node may read
// the udf back at the same point.
// CHECK-LABEL: pdg.graph @udf_attrs_and_reads {
// CHECK-NEXT:    pdg.dim @t < 16
// CHECK-NEXT:    %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// CHECK-NEXT:    %sq = pdg.node "sq" [t] (%arg0 = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %arg0, %arg0 : tensor<f32>
// CHECK-NEXT:      pdg.yield %[[M]] : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %log = pdg.udf "log" [t] (%sq[0] : !pdg.value<[t], tensor<f32>>, %sq[max(0, t - 3) : t + 1] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {pdg.effects = "stdout", pdg.rate = 4 : i64}
// CHECK-NEXT:    %use = pdg.node "use" [t] (%arg0 = %log[t] : !pdg.value<[t], tensor<i1>>) -> tensor<i1> {
// CHECK-NEXT:      pdg.yield %arg0 : tensor<i1>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
pdg.graph @udf_attrs_and_reads {
  pdg.dim @t < 16
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %sq = pdg.node "sq" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    %m = arith.mulf %v, %v : tensor<f32>
    pdg.yield %m : tensor<f32>
  }
  %log = pdg.udf "log" [t] (%sq[0] : !pdg.value<[t], tensor<f32>>, %sq[max(0, t - 3) : t + 1] : !pdg.value<[t], tensor<f32>>) -> tensor<i1> {pdg.rate = 4, pdg.effects = "stdout"}
  %use = pdg.node "use" [t] (%v = %log[t] : !pdg.value<[t], tensor<i1>>) -> tensor<i1> {
    pdg.yield %v : tensor<i1>
  }
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
