//===- Passes.td - pdg passes written in C++ ------------------------------===//

#ifndef PDG_PASSES_TD
#define PDG_PASSES_TD

include "mlir/Pass/PassBase.td"

def PdgDeadNodeElimination : Pass<"pdg-dce", "::mlir::pdg::GraphOp"> {
  let summary = "Remove nodes that no output, host callback or bound needs";
  let description = [{
    Keeps what the program's results depend on: outputs, UDF nodes (host
    callbacks may have effects), program inputs (the signature) and the
    `until` conditions of dynamic dims, and everything they read, through
    any access. Everything else is erased, dead cycles included. Unlike
    `canonicalize` (which also erases unused pure nodes), it changes nothing
    else: no access simplification, no input pruning. Use it after passes
    that make values unused (dedup, incrementalize).
  }];
  let statistics = [
    Statistic<"numErased", "erased-nodes", "Number of nodes erased">
  ];
}

#endif // PDG_PASSES_TD
