//===- FuseProducers.cpp - pdg-fuse ---------------------------------------===//
//
// A node read by exactly one other node, over the same domain and at the
// same point, is computed inside its reader:
//
//   %p = pdg.node "p" [b, t] (%a = %x[b, t - 1] ...) { f(a) }
//   %c = pdg.node "c" [b, t] (%q = %p[b, t], %y = %z[b, t]) { g(q, y) }
// =>
//   %c = pdg.node "c" [b, t] (%y = %z[b, t], %a = %x[b, t - 1]) { g(f(a), y) }
//
// The producer's reads move to the consumer unchanged (both index the same
// dims in the same order), so each point still computes f once, and the
// store that held p between the two disappears. Gradients and optimizer
// updates are long chains of such elementwise nodes; one node per chain
// means one store, one loop nest and one call per point instead of many.
// The producer must have a single case, unconditional or guarded exactly as
// the consumer's case that reads it, and symbols its consumer also binds;
// outputs, `until` values and udfs are never fused.
//
// A producer with several such readers is computed in each of them when it
// only spreads small reads over a value at least 4x their size, element by
// element (a one-hot of the sampled tokens over the vocabulary, read by the
// log-prob's step and by its gradient's): storing it would cost more than
// computing it twice, and a value read in another loop nest (a backward
// pass) would be kept for every step.
//
// A producer that reduces what it reads to a value at least 4x smaller (a
// sum of squares) is not fused into a consumer that would then read more
// than `max-reads` values (40 by default; the widest other body of the GRPO
// program, the logits' gradient, reads 32). Storing such a value costs
// little, while LLVM's time on a function grows faster than its size: the
// chain that adds up one sum of squares per weight (a global gradient norm)
// would otherwise become one body with a loop nest per weight, which alone
// took opt and llc about 19 s of a 70 s compile at d_model 32.
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "NodeBuilder.h"
#include "Passes.h"
#include "PdgOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGFUSEPRODUCERS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

/// Whether `access` reads the producer at the consumer's own point: entry i
/// is the point `d_i`.
bool isIdentity(AccessAttr access) {
  for (size_t i = 0; i < access.getNumEntries(); ++i) {
    if (access.isSlice(i))
      return false;
    auto lbs = access.getLowerBounds(i);
    if (lbs.size() != 1)
      return false;
    auto d = dyn_cast<AffineDimExpr>(lbs[0]);
    if (!d || d.getPosition() != i)
      return false;
  }
  return true;
}

/// Whether p's one case holds wherever c's case k does: p is unconditional,
/// or guarded exactly as that case (the frontend restricts the nodes a case
/// reads to the case's condition).
bool covered(NodeOp p, NodeOp c, unsigned k) {
  IntegerSet own = p.getCondition(0);
  return isAlwaysTrue(own) ||
         (p.getSymbols() == c.getSymbols() && own == c.getCondition(k));
}

/// A value this many times larger than what its body reads is computed again
/// in each of its readers rather than stored (see `recomputable`).
constexpr int64_t kExpansion = 4;

int64_t staticElements(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() ? t.getNumElements() : -1;
}

/// The elements p's body reads, its arguments' static sizes summed; -1 if
/// one is dynamic.
int64_t elementsRead(NodeOp p) {
  int64_t in = 0;
  for (BlockArgument a : p.getCases()[0].front().getArguments()) {
    int64_t n = staticElements(a.getType());
    if (n < 0)
      return -1;
    in += n;
  }
  return in;
}

/// Whether p is cheaper to compute in each of its readers than to store:
/// its body only spreads small reads over a large value, element by element
/// (a one-hot from token ids, a mask from positions), with no reduction.
bool recomputable(NodeOp p) {
  int64_t out = staticElements(p.getValueType().getPointType());
  int64_t in = elementsRead(p);
  if (out < 0 || in < 0 || in * kExpansion > out)
    return false;
  bool reduces = false;
  p.getCases()[0].walk([&](linalg::LinalgOp op) { reduces |= op.getNumReductionLoops() > 0; });
  return !reduces;
}

/// Whether p's value is at least kExpansion times smaller than what its body
/// reads (a sum of squares).
bool shrinks(NodeOp p) {
  int64_t out = staticElements(p.getValueType().getPointType());
  int64_t in = elementsRead(p);
  return out >= 0 && in >= 0 && out * kExpansion <= in;
}

/// Whether `c` may compute p (read only at its own point) in its body.
bool canFuseInto(NodeOp p, NodeOp c) {
  if (c.getValueType().getDomain() != p.getValueType().getDomain())
    return false;
  for (auto [i, input] : llvm::enumerate(c.getInputs()))
    if (input == p.getResult() && !isIdentity(c.getAccess(i)))
      return false;
  for (unsigned k = 0, n = c.getCases().size(); k < n; ++k) {
    unsigned start = c.getCaseInputStart(k);
    unsigned count = c.getCases()[k].getNumArguments();
    for (unsigned i = start; i < start + count; ++i)
      if (c.getInputs()[i] == p.getResult() && !covered(p, c, k))
        return false;
  }
  for (Attribute s : p.getSymbols())
    if (!llvm::is_contained(c.getSymbols(), s))
      return false;
  return true;
}

/// A node that reads `p` and computes it in its body: the only one, or,
/// when p is recomputable, the first of several that all may; one that
/// would read more than `maxReads` values takes no p that shrinks.
NodeOp fusableConsumer(NodeOp p, unsigned maxReads) {
  if (p.getCases().size() != 1)
    return {};
  llvm::SmallVector<NodeOp> readers;
  for (Operation *user : p.getResult().getUsers()) {
    auto node = dyn_cast<NodeOp>(user);
    if (!node || node == p)
      return {};
    if (!llvm::is_contained(readers, node))
      readers.push_back(node);
  }
  if (readers.empty() || (readers.size() > 1 && !recomputable(p)))
    return {};
  for (NodeOp c : readers)
    if (!canFuseInto(p, c))
      return {};
  if (shrinks(p) && p.getInputs().size() + readers.front().getInputs().size() - 1 > maxReads)
    return {};
  return readers.front();
}

struct FuseProducers : mlir::pdg::impl::PdgFuseProducersBase<FuseProducers> {
  using PdgFuseProducersBase::PdgFuseProducersBase;

  void runOnOperation() override {
    Block &body = getOperation().getBodyBlock();
    // Fusing replaces the consumer, which can make its other producers
    // fusable: rescan from where the last fusion left off, then once more.
    Operation *from = nullptr;
    while (true) {
      NodeOp p, c;
      auto scan = [&](Block::iterator begin, Block::iterator end) {
        for (Operation &op : llvm::make_range(begin, end))
          if (auto node = dyn_cast<NodeOp>(op))
            if ((c = fusableConsumer(node, maxReads))) {
              p = node;
              return;
            }
      };
      scan(from ? Block::iterator(from) : body.begin(), body.end());
      if (!p && from)
        scan(body.begin(), Block::iterator(from));
      if (!p)
        break;
      from = fuse(p, c);
      ++numFused;
    }
  }

  /// p's reads, re-expressed with c's symbol positions.
  AccessAttr remapSymbols(AccessAttr access, NodeOp p, NodeOp c) {
    MLIRContext *ctx = &getContext();
    unsigned nd = access.getNumDims();
    llvm::SmallVector<AffineExpr> dims, syms;
    for (unsigned i = 0; i < nd; ++i)
      dims.push_back(getAffineDimExpr(i, ctx));
    for (Attribute s : p.getSymbols()) {
      auto at = llvm::find(c.getSymbols(), s) - c.getSymbols().begin();
      syms.push_back(getAffineSymbolExpr(at, ctx));
    }
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
    for (size_t j = 0; j < access.getNumEntries(); ++j) {
      llvm::SmallVector<AffineExpr> lo, hi;
      for (AffineExpr e : access.getLowerBounds(j))
        lo.push_back(e.replaceDimsAndSymbols(dims, syms));
      for (AffineExpr e : access.getUpperBounds(j))
        hi.push_back(e.replaceDimsAndSymbols(dims, syms));
      lbs.push_back(lo);
      ubs.push_back(hi);
    }
    return AccessAttr::fromEntries(ctx, nd, c.getSymbols().size(), lbs, ubs);
  }

  /// Returns the fused node (it replaces c).
  Operation *fuse(NodeOp p, NodeOp c) {
    Location loc = c.getLoc();
    Block &pBody = p.getCases()[0].front();
    llvm::SmallVector<Attribute> pAccesses;
    for (unsigned i = 0, e = p.getInputs().size(); i < e; ++i)
      pAccesses.push_back(remapSymbols(p.getAccess(i), p, c));

    // Per case of c: its inputs but p, then p's inputs where it read p.
    llvm::SmallVector<Value> inputs;
    llvm::SmallVector<Attribute> accesses;
    llvm::SmallVector<llvm::SmallVector<unsigned>> kept; // per case: c's inputs kept
    llvm::SmallVector<bool> readsP;
    for (unsigned k = 0, n = c.getCases().size(); k < n; ++k) {
      unsigned start = c.getCaseInputStart(k);
      unsigned count = c.getCases()[k].getNumArguments();
      kept.emplace_back();
      bool reads = false;
      for (unsigned i = start; i < start + count; ++i) {
        if (c.getInputs()[i] == p.getResult()) {
          reads = true;
          continue;
        }
        kept.back().push_back(i);
        inputs.push_back(c.getInputs()[i]);
        accesses.push_back(c.getAccesses()[i]);
      }
      if (reads) {
        inputs.append(p.getInputs().begin(), p.getInputs().end());
        accesses.append(pAccesses);
      }
      readsP.push_back(reads);
    }

    OpBuilder b(c);
    auto fused = createNode(b, loc, c.getResult().getType(), inputs, accesses,
                            c.getConditions().getValue(), c.getSymbols(), c.getNameAttr());

    for (unsigned k = 0, n = c.getCases().size(); k < n; ++k) {
      Block &old = c.getCases()[k].front();
      unsigned start = c.getCaseInputStart(k);
      Block *block = new Block();
      fused.getCases()[k].push_back(block);
      OpBuilder bb = OpBuilder::atBlockEnd(block);
      IRMapping map;
      for (unsigned i : kept[k])
        map.map(old.getArgument(i - start),
                block->addArgument(old.getArgument(i - start).getType(), loc));
      if (readsP[k]) {
        IRMapping pMap;
        for (BlockArgument a : pBody.getArguments())
          pMap.map(a, block->addArgument(a.getType(), a.getLoc()));
        for (Operation &op : pBody.without_terminator())
          bb.clone(op, pMap);
        Value produced = pMap.lookup(cast<YieldOp>(pBody.getTerminator()).getValue());
        for (unsigned i = 0; i < old.getNumArguments(); ++i)
          if (c.getInputs()[start + i] == p.getResult())
            map.map(old.getArgument(i), produced);
      }
      for (Operation &op : old)
        bb.clone(op, map);
    }
    c.getResult().replaceAllUsesWith(fused.getResult());
    c->dropAllReferences();
    c->erase();
    if (p.getResult().use_empty()) { // else computed again in its other readers
      p->dropAllReferences();
      p->erase();
    }
    return fused;
  }
};

} // namespace
