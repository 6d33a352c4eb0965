//===- DeadNodeElimination.cpp - pdg-dce ----------------------------------===//

#include "Passes.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGDEADNODEELIMINATION
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {
struct DeadNodeElimination
    : mlir::pdg::impl::PdgDeadNodeEliminationBase<DeadNodeElimination> {
  void runOnOperation() override {
    Block &body = getOperation().getBodyBlock();
    // Liveness flows from the roots backwards along every operand.
    llvm::SetVector<Operation *> live;
    llvm::SmallVector<Operation *> work;
    for (Operation &op : body)
      if (isa<OutputOp, UdfOp, DimOp, InputOp>(op))
        work.push_back(&op);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!live.insert(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (def->getBlock() == &body && !live.contains(def))
            work.push_back(def);
    }
    llvm::SmallVector<Operation *> dead;
    for (Operation &op : body)
      if (!live.contains(&op))
        dead.push_back(&op);
    // Dead nodes may read each other in cycles: drop all references before
    // erasing any of them.
    for (Operation *op : dead)
      op->dropAllReferences();
    for (Operation *op : dead)
      op->erase();
    numErased += dead.size();
  }
};
} // namespace
