// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of launch pdg.dim, with and without `max`.

// CHECK-LABEL: pdg.graph @launch_dims {
// CHECK-NEXT:    pdg.dim @b < launch B
// CHECK-NEXT:    pdg.dim @h < launch NumHeads max 64
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "launch_dims"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{bound = "B", kind = #pdg<bound launch>, sym_name = "b"}> : () -> ()
// GENERIC-NEXT:    "pdg.dim"() <{bound = "NumHeads", kind = #pdg<bound launch>, size = 64 : i64, sym_name = "h"}> : () -> ()
pdg.graph @launch_dims {
  pdg.dim @b < launch B
  pdg.dim @h < launch NumHeads max 64
}
