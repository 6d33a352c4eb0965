// RUN: pdg-opt %S/../../examples/decode_step.mlir | pdg-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: pdg-opt %S/../../examples/decode_step.mlir --mlir-print-op-generic | pdg-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: pdg-opt %S/../../examples/decode_step.mlir --pdg-dce --canonicalize | FileCheck %s --check-prefix=OPT
// The sample program examples/decode_step.mlir round-trips in both forms and loses its dead node to pdg-dce.

// ROUNDTRIP-LABEL: pdg.graph @decode {
// ROUNDTRIP-NEXT:    pdg.dim @b < launch B max 64
// ROUNDTRIP-NEXT:    pdg.dim @t < dynamic T max 256 until %done : !pdg.value<[b, t], tensor<i1>>
// ROUNDTRIP:         %att = pdg.node "att" [b, t] (%arg0 = %q[b, t] : !pdg.value<[b, t], tensor<32xf32>>, %arg1 = %k[b, max(0, t - 15) : t + 1] : !pdg.value<[b, t], tensor<32xf32>>, %arg2 = %v[b, max(0, t - 15) : t + 1] : !pdg.value<[b, t], tensor<32xf32>>) -> tensor<32xf32> {
// ROUNDTRIP:         %unused = pdg.node "unused"
// ROUNDTRIP:         pdg.output "tokens" %next : !pdg.value<[b, t], tensor<i64>>

// OPT-LABEL: pdg.graph @decode {
// OPT:         %done = pdg.node "done"
// OPT-NOT:     pdg.node "unused"
// OPT:         pdg.output "tokens" %next : !pdg.value<[b, t], tensor<i64>>
