//===- DecomposeAggregates.cpp - pdg-decompose-aggregates -----------------===//
//
// linalg.softmax (and any other op with the AggregatedOpInterface) has no
// loop lowering of its own. Upstream only decomposes it through the
// transform dialect; this pass applies the same interface method to every
// such op, before bufferization, so the bodies are plain linalg.generic ops.
// A softmax's exp argument is clamped where exp would underflow (see
// clampSoftmaxExponent).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGDECOMPOSEAGGREGATES
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

/// In a softmax, exp's argument is x - max(x) <= 0. Below -87 (f32; -708
/// for f64) exp underflows past the smallest normal number, and glibc's
/// vector expf handles such lanes on a slow scalar path that sets errno:
/// clamping the argument there keeps every lane fast and changes each
/// probability by less than 2e-38 (f32).
void clampSoftmaxExponent(math::ExpOp exp) {
  auto type = dyn_cast<FloatType>(exp.getType());
  if (!type || (type.getWidth() != 32 && type.getWidth() != 64))
    return;
  OpBuilder b(exp);
  double floor = type.getWidth() == 32 ? -87.0 : -708.0;
  Value lowest = arith::ConstantOp::create(b, exp.getLoc(), b.getFloatAttr(type, floor));
  Value clamped = arith::MaximumFOp::create(b, exp.getLoc(), exp.getOperand(), lowest);
  exp.getOperandMutable().assign(clamped);
}

struct DecomposeAggregates
    : mlir::pdg::impl::PdgDecomposeAggregatesBase<DecomposeAggregates> {
  void runOnOperation() override {
    llvm::SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    for (linalg::AggregatedOpInterface op : ops) {
      Operation *before = op->getPrevNode();
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(b);
      if (failed(parts)) {
        op->emitError("cannot decompose this op into linalg.generic ops");
        return signalPassFailure();
      }
      if (isa<linalg::SoftmaxOp>(op.getOperation())) {
        Block *block = op->getBlock();
        auto first = before ? std::next(before->getIterator()) : block->begin();
        for (Operation &made : llvm::make_range(first, op->getIterator()))
          made.walk([](math::ExpOp exp) { clampSoftmaxExponent(exp); });
      }
      op->replaceAllUsesWith(*parts);
      op->erase();
      ++numDecomposed;
    }
  }
};

} // namespace
