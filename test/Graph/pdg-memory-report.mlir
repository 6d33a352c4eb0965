// --pdg-memory-report: each store as a formula in the bound symbols, and
// evaluated for --pdg-symbols; outputs are reported apart as results.
// RUN: pdg-opt %S/../../examples/decode_step.mlir --pdg-plan-storage --pdg-memory-report --pdg-symbols B=2,T=100 | FileCheck %s
// Without planned stores the report plans them itself.
// RUN: pdg-opt %S/../../examples/decode_step.mlir --pdg-memory-report --pdg-symbols B=2 --pdg-symbols T=100 | FileCheck %s
// Without symbol values only the formulas are shown.
// RUN: pdg-opt %S/../../examples/decode_step.mlir --pdg-memory-report | FileCheck %s --check-prefix=FORMULA

// CHECK: memory report for @decode (symbols: B=2, T=100)
// CHECK: wte {{ +}}input {{ +}}[] {{ +}}8192 {{ +}}8192
// CHECK: k {{ +}}window {{ +}}[B, 16] {{ +}}2048 * B {{ +}}4096
// CHECK: logits (output) {{ +}}growable {{ +}}[B, T] {{ +}}256 * B * T {{ +}}51200
// CHECK: working set: 20480 + 4625 * B = 29730 bytes
// CHECK: results: 264 * B * T = 52800 bytes
// CHECK: peak: 20480 + 4625 * B + 264 * B * T = 82530 bytes

// FORMULA: memory report for @decode (symbols: none given)
// FORMULA: peak: 20480 + 4625 * B + 264 * B * T{{$}}
