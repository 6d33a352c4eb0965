//===- ScatterIndexAdds.cpp - pdg-scatter-index-adds ----------------------===//
//
// The frontend writes index_add (take's gradient: an embedding table's
// gradient from the gradients of the rows it looked up) as a linalg.generic
// over every (table row, index) pair: out[v, ...] += (idx[n] == v ? g[n, ...]
// : 0). That is dense and structured, so every pass and the interpreter
// handle it, but it costs (table rows x indices x row length) compares: at
// a vocabulary of 50k, 10^10 per training step for what is an addition of a
// few hundred rows. On buffers, where nothing after this pass needs the
// structured form, such a generic becomes the scatter it means: loops over
// every dim but the table's, each adding its g element to the row the index
// names. Indices outside the table add nothing, as in the dense form, and
// each output element gets its terms in the same order.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGSCATTERINDEXADDS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

/// An index_add generic: out (init) += g where idx == linalg.index `dim`.
struct IndexAdd {
  unsigned dim;       // the loop over the table's rows
  unsigned values;    // input operand number of g
  unsigned indices;   // input operand number of idx
  Operation *add;     // the accumulating addf / addi (its flags are kept)
};

/// `v` through value-preserving integer casts (sign extension, index_cast).
Value throughCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::ExtSIOp, arith::IndexCastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

bool isZero(Value v) {
  return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
}

std::optional<IndexAdd> matchIndexAdd(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return std::nullopt;
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add))
    return std::nullopt;
  BlockArgument acc = body.getArgument(2);
  Value picked = add->getOperand(0) == acc ? add->getOperand(1) : add->getOperand(0);
  if (picked == acc || (add->getOperand(0) != acc && add->getOperand(1) != acc))
    return std::nullopt;
  auto select = picked.getDefiningOp<arith::SelectOp>();
  if (!select || !isZero(select.getFalseValue()))
    return std::nullopt;
  auto value = dyn_cast<BlockArgument>(select.getTrueValue());
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!value || value.getOwner() != &body || value.getArgNumber() >= 2 || !cmp ||
      cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  Value lhs = throughCasts(cmp.getLhs()), rhs = throughCasts(cmp.getRhs());
  if (lhs.getDefiningOp<linalg::IndexOp>())
    std::swap(lhs, rhs);
  auto index = dyn_cast<BlockArgument>(lhs);
  auto loop = rhs.getDefiningOp<linalg::IndexOp>();
  if (!index || index.getOwner() != &body || index.getArgNumber() >= 2 ||
      index.getArgNumber() == value.getArgNumber() || !loop ||
      !isa<IntegerType>(index.getType()))
    return std::nullopt;
  // Nothing else may happen in the body: every op is one of those above or
  // a cast between them.
  for (Operation &inner : body.without_terminator()) {
    if (&inner == add || &inner == select.getOperation() || &inner == cmp.getOperation() ||
        &inner == loop.getOperation())
      continue;
    bool cast = isa<arith::ExtSIOp, arith::IndexCastOp>(inner) &&
                (throughCasts(inner.getResult(0)) == index ||
                 throughCasts(inner.getResult(0)) == loop.getResult());
    bool zero = inner.getNumResults() == 1 && inner.getResult(0) == select.getFalseValue();
    if (!cast && !zero)
      return std::nullopt;
  }
  unsigned dim = loop.getDim();
  if (!linalg::isParallelIterator(op.getIteratorTypesArray()[dim]))
    return std::nullopt;
  AffineMap out = op.getIndexingMapsArray()[2];
  if (!out.isFunctionOfDim(dim) || op.getIndexingMapsArray()[0].isFunctionOfDim(dim) ||
      op.getIndexingMapsArray()[1].isFunctionOfDim(dim))
    return std::nullopt;
  return IndexAdd{dim, value.getArgNumber(), index.getArgNumber(), add};
}

/// The indices `map` reads at loop values `ivs`.
SmallVector<Value> at(AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return out;
}

void rewrite(linalg::GenericOp op, const IndexAdd &match, IRRewriter &rewriter) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Range> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(rewriter, loc);
  auto maps = op.getIndexingMapsArray();
  // Loops over every dim but the table's: those the output does not index
  // (the indices') outside, so the innermost loop walks a row of g and of
  // the output with unit stride.
  SmallVector<unsigned> order;
  for (bool indexed : {false, true})
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      if (d != match.dim && maps[2].isFunctionOfDim(d) == indexed)
        order.push_back(d);
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned d : order) {
    lbs.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].offset));
    ubs.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].size));
    steps.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].stride));
  }
  Value rows = getValueOrCreateConstantIndexOp(rewriter, loc, ranges[match.dim].size);
  Value values = op.getDpsInputs()[match.values];
  Value indices = op.getDpsInputs()[match.indices];
  Value target = op.getDpsInits()[0];
  scf::buildLoopNest(
      rewriter, loc, lbs, ubs, steps, [&](OpBuilder &b, Location loc, ValueRange loopIvs) {
        SmallVector<Value> ivs(op.getNumLoops());
        for (auto [d, iv] : llvm::zip(order, loopIvs))
          ivs[d] = iv;
        Value index = memref::LoadOp::create(b, loc, indices, at(maps[match.indices], ivs));
        Value row = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
        // Unsigned: a negative index is past the end too.
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows);
        auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(guard.thenBlock());
        Value term = memref::LoadOp::create(b, loc, values, at(maps[match.values], ivs));
        ivs[match.dim] = row;
        SmallVector<Value> where = at(maps[2], ivs);
        Value acc = memref::LoadOp::create(b, loc, target, where);
        // The dense form's add, with its fastmath flags, on the same operands.
        Operation *sum = b.clone(*match.add);
        Block &body = op.getRegion().front();
        for (OpOperand &operand : sum->getOpOperands())
          operand.set(operand.get() == body.getArgument(2) ? acc : term);
        memref::StoreOp::create(b, loc, sum->getResult(0), target, where);
      });
  rewriter.eraseOp(op);
}

struct ScatterIndexAdds : mlir::pdg::impl::PdgScatterIndexAddsBase<ScatterIndexAdds> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, IndexAdd>> found;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (auto match = matchIndexAdd(op))
        found.push_back({op, *match});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, match] : found) {
      rewrite(op, match, rewriter);
      ++numScattered;
    }
  }
};

} // namespace
