//===- FuseElementwise.cpp - pdg-fuse-elementwise -------------------------===//
//
// A node body is a chain of linalg ops on tensors, and bufferization gives
// every intermediate result a buffer and a loop nest of its own: Adam's
// update of one weight (w - lr * m / (sqrt(v) + eps), with its bias
// corrections) ran as seven loops over the weight and kept two temporaries
// of its size. Fusing an elementwise producer into its elementwise
// consumer (both all-parallel, the producer's result used there only)
// computes the chain in one loop nest: each element passes through every
// op in registers, with no temporary. Contractions and reductions are left
// as they are (pdg-call-blas and the register micro-kernels match them
// whole), and a producer with several users is not computed twice. Every
// element goes through the same scalar ops in the same order: results are
// unchanged, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGFUSEELEMENTWISE
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

bool allParallel(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops();
}

struct FuseElementwise : mlir::pdg::impl::PdgFuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *operand) {
      Value produced = operand->get();
      return allParallel(operand->getOwner()) && allParallel(produced.getDefiningOp()) &&
             produced.hasOneUse();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
