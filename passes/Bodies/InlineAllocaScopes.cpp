//===- InlineAllocaScopes.cpp - pdg-inline-alloca-scopes ------------------===//
//
// The one place that works around convert-scf-to-openmp's alloca scopes
// (MLIR 22.1.8): a scope around a loop body that calls functions stays
// (canonicalization counts a call as a possible allocation), and after
// convert-scf-to-cf its region holds several blocks, which the verifier of
// memref.alloca_scope refuses. A scope whose own region allocates nothing
// on the stack does nothing, so its ops move into the parent block.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGINLINEALLOCASCOPES
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

/// True if `scope` itself allocates on the stack: a memref.alloca in its
/// region, not inside a nested function or a nested scope (which keeps its
/// own allocations).
bool allocates(memref::AllocaScopeOp scope) {
  bool found = false;
  scope.getBodyRegion().walk([&](Operation *op) {
    if (isa<FunctionOpInterface>(op) ||
        (isa<memref::AllocaScopeOp>(op) && op != scope.getOperation()))
      return WalkResult::skip();
    if (isa<memref::AllocaOp>(op)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

struct InlineAllocaScopes : mlir::pdg::impl::PdgInlineAllocaScopesBase<InlineAllocaScopes> {
  void runOnOperation() override {
    llvm::SmallVector<memref::AllocaScopeOp> scopes;
    getOperation()->walk([&](memref::AllocaScopeOp scope) { scopes.push_back(scope); });
    IRRewriter rewriter(&getContext());
    // Innermost first (post-order walk): an inner scope is gone before its
    // parent is looked at.
    for (memref::AllocaScopeOp scope : scopes) {
      Region &body = scope.getBodyRegion();
      if (!body.hasOneBlock() || allocates(scope))
        continue;
      Block &block = body.front();
      auto ret = cast<memref::AllocaScopeReturnOp>(block.getTerminator());
      llvm::SmallVector<Value> results(ret.getResults());
      rewriter.eraseOp(ret);
      rewriter.inlineBlockBefore(&block, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};

} // namespace
