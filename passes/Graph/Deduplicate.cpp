//===- Deduplicate.cpp - pdg-dedup ----------------------------------------===//

#include "Passes.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGDEDUPLICATE
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

/// Same op kind, result type, operands, inherent attributes (the `name` of
/// a node aside) and equivalent case bodies.
bool sameNode(NodeOp a, NodeOp b) {
  if (a.getResult().getType() != b.getResult().getType() ||
      a.getInputs() != b.getInputs() || a.getAccesses() != b.getAccesses() ||
      a.getConditions() != b.getConditions() || a.getSymbols() != b.getSymbols() ||
      a.getCases().size() != b.getCases().size())
    return false;
  for (auto [ra, rb] : llvm::zip(a.getCases(), b.getCases()))
    if (!OperationEquivalence::isRegionEquivalentTo(
            &ra, &rb, OperationEquivalence::IgnoreLocations))
      return false;
  return true;
}

llvm::hash_code hashNode(NodeOp op) {
  llvm::hash_code h = llvm::hash_combine(op.getResult().getType(),
                                         op.getAccesses(), op.getConditions());
  for (Value v : op.getInputs())
    h = llvm::hash_combine(h, v);
  return h;
}

struct Deduplicate : mlir::pdg::impl::PdgDeduplicateBase<Deduplicate> {
  void runOnOperation() override {
    Block &body = getOperation().getBodyBlock();
    bool changed = true;
    // Merging two nodes can make their readers identical: repeat.
    while (changed) {
      changed = false;
      llvm::DenseMap<unsigned, llvm::SmallVector<NodeOp>> buckets;
      llvm::SmallVector<NodeOp> dead;
      for (auto node : body.getOps<NodeOp>()) {
        auto &bucket = buckets[hashNode(node)];
        NodeOp keep;
        for (NodeOp other : bucket)
          if (sameNode(other, node)) {
            keep = other;
            break;
          }
        if (!keep) {
          bucket.push_back(node);
          continue;
        }
        node.getResult().replaceAllUsesWith(keep.getResult());
        dead.push_back(node);
      }
      for (NodeOp node : dead) {
        node->dropAllReferences();
        node->erase();
      }
      numMerged += dead.size();
      changed = !dead.empty();
    }
  }
};
} // namespace
