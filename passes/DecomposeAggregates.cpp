//===- DecomposeAggregates.cpp - pdg-decompose-aggregates -----------------===//
//
// linalg.softmax (and any other op with the AggregatedOpInterface) has no
// loop lowering of its own. Upstream only decomposes it through the
// transform dialect; this pass applies the same interface method to every
// such op, before bufferization, so the bodies are plain linalg.generic ops.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGDECOMPOSEAGGREGATES
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

struct DecomposeAggregates
    : mlir::pdg::impl::PdgDecomposeAggregatesBase<DecomposeAggregates> {
  void runOnOperation() override {
    llvm::SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    for (linalg::AggregatedOpInterface op : ops) {
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(b);
      if (failed(parts)) {
        op->emitError("cannot decompose this op into linalg.generic ops");
        return signalPassFailure();
      }
      op->replaceAllUsesWith(*parts);
      op->erase();
      ++numDecomposed;
    }
  }
};

} // namespace
