// RUN: pdg-opt %s --pdg-dce --canonicalize --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: pdg-opt %s --pass-pipeline='builtin.module(pdg-dce,canonicalize)' --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: pdg-opt %s --canonicalize --pdg-dce --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=REVERSED
// RUN: pdg-opt %s --pass-pipeline='builtin.module(pdg.graph(pdg-dce),canonicalize)' --mlir-print-ir-after-all 2>/dev/null | FileCheck %s --check-prefix=FINAL
// RUN: not pdg-opt %s --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=BADPASS
// Pass pipelines of pdg-dce and canonicalize: flags, --pass-pipeline, explicit nesting, IR dumps after each pass.

// pdg-dce runs on each pdg.graph: its dump shows the graph alone, without
// the simplification canonicalize does next; canonicalize's dump is the module.
// DUMP:           // -----// IR Dump After PdgDeadNodeElimination (pdg-dce) //----- //
// DUMP-NEXT:      pdg.graph @pipeline {
// DUMP-NEXT:        pdg.dim @t < 8
// DUMP-NEXT:        %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// DUMP-NEXT:        %y = pdg.node "y" [t] (%arg0 = %x[max(0, t - 1, t - 2) : t + 1] : !pdg.value<[t], tensor<f32>>, %arg1 = %x[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// DUMP-NEXT:          pdg.yield %arg1 : tensor<f32>
// DUMP-NEXT:        }
// DUMP-NEXT:        pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
// DUMP-NEXT:      }
// DUMP:           // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// DUMP-NEXT:      module {
// DUMP-NEXT:        pdg.graph @pipeline {
// DUMP-NEXT:          pdg.dim @t < 8
// DUMP-NEXT:          %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// DUMP-NEXT:          %y = pdg.node "y" [t] (%arg0 = %x[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// The final module is printed on stdout after the dumps.
// DUMP:           module {
// DUMP-NEXT:        pdg.graph @pipeline {
// DUMP-NOT:       IR Dump

// In the other order, the dead node is already gone after canonicalize.
// REVERSED:       // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// REVERSED-NEXT:  module {
// REVERSED-NOT:     pdg.node "dead"
// REVERSED:       // -----// IR Dump After PdgDeadNodeElimination (pdg-dce) //----- //
// REVERSED-NEXT:  pdg.graph @pipeline {

// FINAL-NOT:      IR Dump
// FINAL:          module {
// FINAL-NEXT:       pdg.graph @pipeline {
// FINAL-NEXT:         pdg.dim @t < 8
// FINAL-NEXT:         %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
// FINAL-NEXT:         %y = pdg.node "y" [t] (%arg0 = %x[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
// FINAL-NEXT:           pdg.yield %arg0 : tensor<f32>
// FINAL-NEXT:         }
// FINAL-NEXT:         pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
// FINAL-NEXT:       }
// FINAL-NEXT:     }

// BADPASS: unknown pass 'no-such-pass'

pdg.graph @pipeline {
  pdg.dim @t < 8
  %x = pdg.input "x" : !pdg.value<[t], tensor<f32>>
  %dead = pdg.node "dead" [t] (%v = %x[t] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %v : tensor<f32>
  }
  %y = pdg.node "y" [t] (%v = %x[max(0, t - 1, t - 2) : t + 1] : !pdg.value<[t], tensor<f32>>, %u = %x[0] : !pdg.value<[t], tensor<f32>>) -> tensor<f32> {
    pdg.yield %u : tensor<f32>
  }
  pdg.output "y" %y : !pdg.value<[t], tensor<f32>>
}
