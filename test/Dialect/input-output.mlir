// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of pdg.input and pdg.output: names, sanitized SSA names, attributes.

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
