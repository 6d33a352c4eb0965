// RUN: pdg-opt %s | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | pdg-opt | FileCheck %s
// RUN: pdg-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of pdg.graph: an empty graph, discardable attributes, the bound kind attribute.

// An empty graph is a valid (if useless) program.
// CHECK-LABEL: pdg.graph @empty {
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "empty"}> ({
// GENERIC-NEXT:  ^bb0:
// GENERIC-NEXT:  }) : () -> ()
pdg.graph @empty {
}

// Discardable attributes on the graph go after the `attributes` keyword.
// CHECK-LABEL: pdg.graph @with_attrs attributes {pdg.note = "decoder", pdg.version = 2 : i64} {
// CHECK-NEXT:    pdg.dim @i < 1
// CHECK-NEXT:  }
// GENERIC-LABEL: "pdg.graph"() <{sym_name = "with_attrs"}> ({
// GENERIC-NEXT:    "pdg.dim"() <{kind = #pdg<bound static>, size = 1 : i64, sym_name = "i"}> : () -> ()
// GENERIC-NEXT:  }) {pdg.note = "decoder", pdg.version = 2 : i64} : () -> ()
pdg.graph @with_attrs attributes {pdg.version = 2, pdg.note = "decoder"} {
  pdg.dim @i < 1
}

// The bound kind attribute on its own.
// CHECK-LABEL: pdg.graph @bound_kind_attr attributes {pdg.kinds = [#pdg<bound static>, #pdg<bound launch>, #pdg<bound dynamic>]} {
pdg.graph @bound_kind_attr attributes {pdg.kinds = [#pdg<bound static>, #pdg<bound launch>, #pdg<bound dynamic>]} {
}
