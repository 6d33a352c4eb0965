//===- InterchangeReductions.cpp - pdg-interchange-reductions -------------===//
//
// convert-linalg-to-loops nests loops in iteration-space order, and the
// frontend lists reduction dims last. A matrix-vector product y[n] =
// sum_k x[k] * W[k, n] then runs n outside and k inside: a scalar add chain
// per output, walking W down its columns. Moving the reductions outside the
// dim that is contiguous in the output (and in every input that reads it)
// gives y[n] += x[k] * W[k, n] with n innermost: unit stride, independent
// iterations, which LLVM vectorizes. Other parallel dims (a batch) go
// between the two, so that each row of W serves every row of the batch, or,
// for long output rows, outside the reductions, so that a row of the
// output stays in registers while it is summed.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGINTERCHANGEREDUCTIONS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

/// The loop to run innermost: the parallel dim indexing the output's last
/// dimension, if every operand indexed by it has it last too. -1: none.
int64_t innermostCandidate(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return -1;
  // The init's map, not the result's: a generic on buffers has no results.
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0)
    return -1;
  auto last = dyn_cast<AffineDimExpr>(out.getResults().back());
  if (!last || !linalg::isParallelIterator(op.getIteratorTypesArray()[last.getPosition()]))
    return -1;
  unsigned dim = last.getPosition();
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [i, expr] : llvm::enumerate(map.getResults()))
      if (expr.isFunctionOfDim(dim) && i + 1 != map.getNumResults())
        return -1; // strided in this input: not worth it
  }
  return dim;
}

/// Output rows at least this long run in the outer loops (measured on a
/// batched matrix product, 2048 rows on x86-64-v3: at 32 columns the
/// reductions outside are 3.5x faster, at 64 and 128 rows outside are 1.4x
/// and 1.7x faster).
constexpr int64_t kLongRow = 64;

struct InterchangeReductions
    : mlir::pdg::impl::PdgInterchangeReductionsBase<InterchangeReductions> {
  void runOnOperation() override {
    llvm::SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      auto iterators = op.getIteratorTypesArray();
      if (llvm::none_of(iterators, linalg::isReductionIterator))
        continue;
      int64_t inner = innermostCandidate(op);
      if (inner < 0)
        continue;
      // Short rows (under 64): the reductions, then the other parallel
      // dims, then `inner`; a weight row W[k, :] is read once for all the
      // rows of a batch. Long rows: the other parallel dims first, so that
      // an output row stays in vector registers through the reduction,
      // instead of being loaded and stored again for every k.
      int64_t extent = op.getStaticLoopRanges()[inner];
      bool rowsFirst = !ShapedType::isDynamic(extent) && extent >= kLongRow;
      llvm::SmallVector<unsigned> order;
      for (bool reductions : {!rowsFirst, rowsFirst})
        for (auto [i, it] : llvm::enumerate(iterators))
          if (linalg::isReductionIterator(it) == reductions && (int64_t)i != inner)
            order.push_back(i);
      order.push_back(inner);
      if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op->emitError("cannot interchange the loops of this linalg.generic");
        return signalPassFailure();
      }
      ++numInterchanged;
    }
  }
};

} // namespace
