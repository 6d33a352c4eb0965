// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of static pdg.dim.

// CHECK-LABEL: pdg.graph @static_dims {
// CHECK-NEXT:    pdg.dim @i < 100
// CHECK-NEXT:    pdg.dim @j < 9223372036854775807
// CHECK-NEXT:    pdg.dim @k < 1 {pdg.hint = "unrolled"}
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "static_dims"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 100 : i64, sym_name = "i"}> : () -> ()
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 9223372036854775807 : i64, sym_name = "j"}> : () -> ()
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 1 : i64, sym_name = "k"}> {pdg.hint = "unrolled"} : () -> ()
pdg.graph @static_dims {
  pdg.dim @i < 100
  pdg.dim @j < 9223372036854775807
  pdg.dim @k < 1 {pdg.hint = "unrolled"}
}
