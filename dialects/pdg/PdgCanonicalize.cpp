//===- PdgCanonicalize.cpp - canonicalization of pdg nodes ----------------===//
//
// Patterns run by the upstream `canonicalize` pass:
//   - simplify access expressions and drop dominated max/min bounds;
//   - simplify case conditions, drop cases that can never be chosen;
//   - drop inputs a body never reads, and symbols nothing uses;
//   - erase nodes whose only reader is themselves. Unused nodes without any
//     reader, and dead cycles, are erased by the pass itself (nodes are Pure;
//     its region simplification finds dead cycles).
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "PdgOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::pdg;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Simplifies a max (isLower) or min bound list: when two bounds differ by a
/// constant, only the tighter one can matter.
static llvm::SmallVector<AffineExpr>
simplifyBounds(llvm::ArrayRef<AffineExpr> bounds, bool isLower,
               unsigned numDims, unsigned numSymbols) {
  llvm::SmallVector<AffineExpr> out;
  for (AffineExpr b : bounds) {
    b = simplifyAffineExpr(b, numDims, numSymbols);
    bool dominated = false;
    for (AffineExpr &kept : out) {
      auto diff = dyn_cast<AffineConstantExpr>(
          simplifyAffineExpr(b - kept, numDims, numSymbols));
      if (!diff)
        continue;
      // For a lower bound keep the larger, for an upper bound the smaller.
      bool tighter = isLower ? diff.getValue() > 0 : diff.getValue() < 0;
      if (tighter)
        kept = b;
      dominated = true;
      break;
    }
    if (!dominated)
      out.push_back(b);
  }
  return out;
}

static AccessAttr simplifyAccess(AccessAttr access) {
  unsigned nd = access.getNumDims(), ns = access.getNumSymbols();
  llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
  for (size_t i = 0, e = access.getNumEntries(); i < e; ++i) {
    if (!access.isSlice(i)) {
      lbs.push_back({simplifyAffineExpr(access.getLowerBounds(i)[0], nd, ns)});
      ubs.emplace_back();
      continue;
    }
    lbs.push_back(simplifyBounds(access.getLowerBounds(i), true, nd, ns));
    ubs.push_back(simplifyBounds(access.getUpperBounds(i), false, nd, ns));
  }
  return AccessAttr::fromEntries(access.getContext(), nd, ns, lbs, ubs);
}

static ArrayAttr simplifyAccesses(ArrayAttr accesses) {
  llvm::SmallVector<Attribute> out;
  for (Attribute a : accesses)
    out.push_back(simplifyAccess(cast<AccessAttr>(a)));
  return ArrayAttr::get(accesses.getContext(), out);
}

/// A simplified condition, or nullopt if it can never hold.
static std::optional<IntegerSet> simplifyCondition(IntegerSet set) {
  unsigned nd = set.getNumDims(), ns = set.getNumSymbols();
  llvm::SmallVector<AffineExpr> constraints;
  llvm::SmallVector<bool> isEq;
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i) {
    AffineExpr c = simplifyAffineExpr(set.getConstraint(i), nd, ns);
    if (auto k = dyn_cast<AffineConstantExpr>(c)) {
      bool holds = set.isEq(i) ? k.getValue() == 0 : k.getValue() >= 0;
      if (!holds)
        return std::nullopt;
      continue; // always true: drop it
    }
    if (llvm::any_of(llvm::zip(constraints, isEq), [&](auto pair) {
          return std::get<0>(pair) == c && std::get<1>(pair) == set.isEq(i);
        }))
      continue;
    constraints.push_back(c);
    isEq.push_back(set.isEq(i));
  }
  if (constraints.empty())
    return getAlwaysTrueSet(nd, ns, set.getContext());
  return IntegerSet::get(nd, ns, constraints, isEq);
}

namespace {

/// Replaces the accesses of a node or udf by their simplified form.
template <typename OpTy>
LogicalResult simplifyAccessesOf(OpTy op, PatternRewriter &rewriter) {
  ArrayAttr accesses = simplifyAccesses(op.getAccesses());
  if (accesses == op.getAccesses())
    return failure();
  rewriter.modifyOpInPlace(op, [&] { op.setAccessesAttr(accesses); });
  return success();
}

struct SimplifyNodeAccesses : OpRewritePattern<NodeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NodeOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(simplifyAccessesOf(op, rewriter)))
      return failure();
    // A slice whose size became constant gives its block argument a static
    // size; the body keeps seeing the old type through a tensor.cast.
    for (unsigned k = 0, e = op.getCases().size(); k < e; ++k) {
      Block &block = op.getCases()[k].front();
      unsigned start = op.getCaseInputStart(k);
      for (BlockArgument arg : block.getArguments()) {
        unsigned i = start + arg.getArgNumber();
        Type fresh = accessedType(cast<ValueType>(op.getInputs()[i].getType()),
                                  op.getAccess(i));
        Type old = arg.getType();
        if (fresh == old)
          continue;
        rewriter.modifyOpInPlace(op, [&] { arg.setType(fresh); });
        rewriter.setInsertionPointToStart(&block);
        auto castOp = tensor::CastOp::create(rewriter, op.getLoc(), old, arg);
        rewriter.replaceAllUsesExcept(arg, castOp.getResult(), castOp);
      }
    }
    return success();
  }
};

/// A udf has no body: only its accesses change.
struct SimplifyUdfAccesses : OpRewritePattern<UdfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UdfOp op,
                                PatternRewriter &rewriter) const override {
    return simplifyAccessesOf(op, rewriter);
  }
};

/// Rebuilds `op` keeping only the cases in `keepCase` (with `conditions`)
/// and, within them, the inputs in `keepInput`.
static void rebuildNode(PatternRewriter &rewriter, NodeOp op,
                        const llvm::SmallBitVector &keepCase,
                        const llvm::SmallBitVector &keepInput,
                        llvm::ArrayRef<Attribute> conditions) {
  llvm::SmallVector<Value> inputs;
  llvm::SmallVector<Attribute> accesses;
  for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
    if (keepInput.test(i)) {
      inputs.push_back(op.getInputs()[i]);
      accesses.push_back(op.getAccesses()[i]);
    }
  // Argument counts per case, read before the bodies move.
  llvm::SmallVector<unsigned> counts;
  for (Region &region : op.getCases())
    counts.push_back(region.getNumArguments());
  OperationState state(op.getLoc(), op->getName());
  state.addOperands(inputs);
  state.addAttributes(op->getAttrs());
  state.addTypes(op.getResult().getType());
  for (unsigned k = 0, e = keepCase.count(); k < e; ++k)
    state.addRegion();
  Operation *fresh = rewriter.create(state);
  auto node = cast<NodeOp>(fresh);
  unsigned kept = 0;
  for (unsigned k = 0, e = op.getCases().size(); k < e; ++k) {
    if (!keepCase.test(k))
      continue;
    Region &dest = node.getCases()[kept++];
    rewriter.inlineRegionBefore(op.getCases()[k], dest, dest.end());
  }
  rewriter.modifyOpInPlace(node, [&] {
    node.setAccessesAttr(rewriter.getArrayAttr(accesses));
    node.setConditionsAttr(rewriter.getArrayAttr(conditions));
    // Erase the dropped block arguments, case by case.
    unsigned caseIndex = 0, input = 0;
    for (unsigned k = 0, e = op.getCases().size(); k < e; ++k) {
      unsigned count = counts[k];
      if (!keepCase.test(k)) {
        input += count;
        continue;
      }
      Block &block = node.getCases()[caseIndex++].front();
      llvm::BitVector erase(count);
      for (unsigned a = 0; a < count; ++a)
        erase[a] = !keepInput.test(input + a);
      block.eraseArguments(erase);
      input += count;
    }
  });
  rewriter.replaceOp(op, node.getResult());
}

struct DropDeadCasesAndInputs : OpRewritePattern<NodeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NodeOp op,
                                PatternRewriter &rewriter) const override {
    unsigned numCases = op.getCases().size();
    llvm::SmallBitVector keepCase(numCases, true);
    llvm::SmallVector<Attribute> conditions;
    bool changed = false, shadowed = false;
    for (unsigned k = 0; k < numCases; ++k) {
      IntegerSet set = op.getCondition(k);
      std::optional<IntegerSet> simple = simplifyCondition(set);
      // A case after an always-true case, or one that never holds, is never
      // chosen. Keep at least one case so that the node stays well formed.
      if (shadowed || (!simple && numCases > 1)) {
        keepCase.reset(k);
        changed = true;
        continue;
      }
      IntegerSet next = simple ? *simple : set;
      changed |= next != set;
      shadowed |= isAlwaysTrue(next);
      conditions.push_back(IntegerSetAttr::get(next));
    }
    if (keepCase.none())
      return failure();
    llvm::SmallBitVector keepInput(op.getInputs().size(), true);
    for (unsigned k = 0, input = 0; k < numCases; ++k) {
      Region &region = op.getCases()[k];
      for (BlockArgument arg : region.getArguments()) {
        if (!keepCase.test(k) || arg.use_empty()) {
          keepInput.reset(input);
          changed = true;
        }
        ++input;
      }
    }
    if (!changed)
      return failure();
    rebuildNode(rewriter, op, keepCase, keepInput, conditions);
    return success();
  }
};

/// Removes symbols that no access or condition mentions any more.
struct PruneNodeSymbols : OpRewritePattern<NodeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NodeOp op,
                                PatternRewriter &rewriter) const override {
    unsigned ns = op.getSymbols().size();
    if (ns == 0)
      return failure();
    unsigned nd = op.getValueType().getRank();
    llvm::SmallBitVector used(ns);
    auto mark = [&](AffineExpr e) {
      e.walk([&](AffineExpr sub) {
        if (auto s = dyn_cast<AffineSymbolExpr>(sub))
          if (s.getPosition() < ns)
            used.set(s.getPosition());
      });
    };
    for (Attribute a : op.getAccesses())
      for (AffineExpr e : cast<AccessAttr>(a).getExprs().getResults())
        mark(e);
    for (unsigned k = 0, e = op.getCases().size(); k < e; ++k)
      for (AffineExpr c : op.getCondition(k).getConstraints())
        mark(c);
    if (used.all())
      return failure();
    MLIRContext *ctx = op.getContext();
    llvm::SmallVector<AffineExpr> dims, syms;
    for (unsigned i = 0; i < nd; ++i)
      dims.push_back(getAffineDimExpr(i, ctx));
    llvm::SmallVector<Attribute> names;
    for (unsigned s = 0; s < ns; ++s) {
      // Unused symbols map to 0: they occur nowhere, so this is never read.
      syms.push_back(used.test(s) ? getAffineSymbolExpr(names.size(), ctx)
                                  : getAffineConstantExpr(0, ctx));
      if (used.test(s))
        names.push_back(op.getSymbols()[s]);
    }
    unsigned newNs = names.size();
    llvm::SmallVector<Attribute> accesses, conditions;
    for (Attribute a : op.getAccesses()) {
      auto access = cast<AccessAttr>(a);
      AffineMap map =
          access.getExprs().replaceDimsAndSymbols(dims, syms, nd, newNs);
      accesses.push_back(AccessAttr::get(ctx, map, access.getLayout()));
    }
    for (unsigned k = 0, e = op.getCases().size(); k < e; ++k)
      conditions.push_back(IntegerSetAttr::get(
          op.getCondition(k).replaceDimsAndSymbols(dims, syms, nd, newNs)));
    rewriter.modifyOpInPlace(op, [&] {
      op.setAccessesAttr(rewriter.getArrayAttr(accesses));
      op.setConditionsAttr(rewriter.getArrayAttr(conditions));
      op.setSymbolsAttr(rewriter.getArrayAttr(names));
    });
    return success();
  }
};

/// A recurrence nothing else reads (`x[t]` from `x[t - 1]` only) is dead.
struct EraseSelfOnlyNode : OpRewritePattern<NodeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NodeOp op,
                                PatternRewriter &rewriter) const override {
    Value result = op.getResult();
    if (result.use_empty() ||
        llvm::any_of(result.getUsers(),
                     [&](Operation *user) { return user != op; }))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses()))
        use.drop();
    });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void NodeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<SimplifyNodeAccesses, DropDeadCasesAndInputs, PruneNodeSymbols,
               EraseSelfOnlyNode>(context);
}

void UdfOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<SimplifyUdfAccesses>(context);
}
