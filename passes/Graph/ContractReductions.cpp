//===- ContractReductions.cpp - pdg-contract-reductions -------------------===//
//
// A weight's gradient is, point by point, an outer product that is then
// summed over the points:
//
//   %e = pdg.node "e" [b, t] (%x = %dy[b, t], %y = %h[b, t]) -> tensor<32x128xf32>
//          { fill 0, then out[i, j] += x[j] * y[i] }
//   %r = pdg.node "r" [] (%a = %e[0 : B, 0 : T]) -> tensor<32x128xf32>
//          { fill 0, then out[i, j] += a[b, t, i, j] }
// =>
//   %r = pdg.node "r" [] (%x = %dy[0 : B, 0 : T], %y = %h[0 : B, 0 : T])
//          { fill 0, then out[i, j] += x[b, t, j] * y[b, t, i] }
//
// The summed node stores B * T * 32 * 128 numbers only to add them up; the
// contracted one reads its 32 + 128 numbers per point and is one matrix
// product with the points as its reduction. This holds whenever the
// producer's body accumulates into a zero-filled output (the combiner is
// an addition), so summing more terms into it is the same sum.
//
// The producer must be read by the sum only, have one unconditional case,
// read its inputs at its own coordinates (each input dim a plain domain
// dim, no slices), and store more per point than its inputs (the rewrite
// then also saves memory). The sum must be one unconditional case whose
// body adds up the sliced dims of its one input and nothing else.
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "NodeBuilder.h"
#include "Passes.h"
#include "PdgOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

#include <optional>

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGCONTRACTREDUCTIONS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

/// The generic that computes a node's body as `fill 0, then accumulate`:
/// a body of exactly tensor.empty, a zero constant, linalg.fill, one
/// linalg.generic whose single output is that fill and whose region yields
/// `x + out` (out used nowhere else), and the yield of the generic.
linalg::GenericOp accumulatingBody(NodeOp node) {
  if (node.getCases().size() != 1 || !isAlwaysTrue(node.getCondition(0)))
    return {};
  Block &body = node.getCases()[0].front();
  auto yield = cast<YieldOp>(body.getTerminator());
  auto generic = yield.getValue().getDefiningOp<linalg::GenericOp>();
  if (!generic || generic->getBlock() != &body || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() != 1)
    return {};
  auto fill = generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !fill->hasOneUse() || fill->getBlock() != &body ||
      !fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return {};
  if (!matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) &&
      !matchPattern(fill.getInputs()[0], m_Zero()))
    return {};
  // Nothing else in the body: the ops counted are empty, zero, fill, generic.
  if (std::distance(body.begin(), body.end()) != 5)
    return {};
  Block &region = generic.getRegion().front();
  BlockArgument out = region.getArguments().back();
  auto sum = region.getTerminator()->getOperand(0).getDefiningOp();
  if (!sum || !isa<arith::AddFOp, arith::AddIOp>(sum) || !out.hasOneUse() ||
      !llvm::is_contained(sum->getOperands(), Value(out)))
    return {};
  for (Value in : generic.getDpsInputs())
    if (!isa<BlockArgument>(in) || cast<BlockArgument>(in).getOwner() != &body)
      return {};
  return generic;
}

/// Whether `r`'s body only sums its one input over the leading `sliced`
/// dims: identity input map, the rest of the dims copied to the output in
/// order, reductions first.
bool sumsLeading(linalg::GenericOp r, unsigned sliced) {
  if (r.getNumDpsInputs() != 1)
    return false;
  AffineMap in = r.getIndexingMapsArray()[0], out = r.getIndexingMapsArray()[1];
  unsigned n = r.getNumLoops();
  if (!in.isIdentity() || out.getNumResults() != n - sliced)
    return false;
  for (unsigned i = 0; i < n - sliced; ++i) {
    auto d = dyn_cast<AffineDimExpr>(out.getResult(i));
    if (!d || d.getPosition() != sliced + i)
      return false;
  }
  auto iterators = r.getIteratorTypesArray();
  for (unsigned i = 0; i < n; ++i)
    if ((iterators[i] == utils::IteratorType::reduction) != (i < sliced))
      return false;
  Block &region = r.getRegion().front();
  Operation *sum = region.getTerminator()->getOperand(0).getDefiningOp();
  return sum && isa<arith::AddFOp, arith::AddIOp>(sum) &&
         llvm::is_contained(sum->getOperands(), region.getArgument(0)) &&
         llvm::is_contained(sum->getOperands(), region.getArgument(1));
}

// Elements per point; none for a point of dynamic size, whose storage the
// pass cannot compare (it leaves such a sum as it is).
std::optional<int64_t> pointElements(Type type) {
  auto point = cast<ValueType>(type).getPointType();
  if (!point.hasStaticShape())
    return std::nullopt;
  return point.getNumElements();
}

/// Whether `r` sums `e` over all the steps of a dynamic dim (the steps of
/// a recurrence, their count known when its loop has run): one of the
/// `sliced` dims is dynamic and `r` is not over it, so `r` runs once after
/// the loop over the stores complete by then. A running sum (`r` over t
/// reading `0 : t + 1`) is a dependence carried along t: left alone.
bool sumsOverSteps(NodeOp r, NodeOp e, llvm::ArrayRef<unsigned> sliced) {
  auto graph = e->getParentOfType<GraphOp>();
  if (!graph)
    return false;
  ValueType summed = e.getValueType();
  for (unsigned i : sliced) {
    StringAttr name = summed.getDomain()[i];
    DimOp dim = graph.lookupDim(name.getValue());
    if (dim && dim.getKind() == BoundKind::Dynamic &&
        r.getValueType().getDimPosition(name.getValue()) < 0)
      return true;
  }
  return false;
}

struct ContractReductions
    : mlir::pdg::impl::PdgContractReductionsBase<ContractReductions> {
  using PdgContractReductionsBase::PdgContractReductionsBase;

  void runOnOperation() override {
    llvm::SmallVector<NodeOp> nodes;
    getOperation().walk([&](NodeOp node) { nodes.push_back(node); });
    // A graph region may list a producer after its reader: skip the
    // producers already erased with their sum.
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (NodeOp r : nodes) {
      if (erased.contains(r))
        continue;
      if (NodeOp e = contract(r)) {
        erased.insert(e);
        e->dropAllReferences();
        e->erase();
        ++numContracted;
      }
    }
  }

  /// Rewrites `r` (the sum) when it matches; returns the product it read,
  /// now unused, for the caller to erase.
  NodeOp contract(NodeOp r) {
    if (r.getInputs().size() != 1)
      return {};
    auto e = r.getInputs()[0].getDefiningOp<NodeOp>();
    if (!e || !e.getResult().hasOneUse())
      return {};
    linalg::GenericOp sum = accumulatingBody(r);
    linalg::GenericOp product = accumulatingBody(e);
    if (!sum || !product)
      return {};
    // Values the region captures from the body must be its constants: the
    // inputs are only reachable through the generic's operands.
    bool capturesInput = false;
    product.getRegion().walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (auto a = dyn_cast<BlockArgument>(v); a && a.getOwner() == &e.getCases()[0].front())
          capturesInput = true;
    });
    if (capturesInput)
      return {};
    AccessAttr read = r.getAccess(0);
    llvm::SmallVector<unsigned> sliced; // e's dims r sums over, in order
    for (size_t i = 0; i < read.getNumEntries(); ++i)
      if (read.isSlice(i))
        sliced.push_back(i);
    if (sliced.empty() || !sumsLeading(sum, sliced.size()) ||
        r.getValueType().getPointType() != e.getValueType().getPointType())
      return {};

    // Each input e's generic reads: e's dims become r's reads of them.
    Block &eBody = e.getCases()[0].front();
    MLIRContext *ctx = &getContext();
    llvm::SmallVector<Value> inputs;
    llvm::SmallVector<Attribute> accesses;
    llvm::SmallVector<AffineMap> maps;
    int64_t stored = 0;
    unsigned s = sliced.size();
    llvm::SmallBitVector covered(read.getNumEntries()); // e's dims some input reads
    for (OpOperand *operand : product.getDpsInputOperands()) {
      unsigned arg = cast<BlockArgument>(operand->get()).getArgNumber();
      AccessAttr access = e.getAccess(arg);
      llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
      llvm::SmallVector<AffineExpr> leading; // the new slice axes, as r's loops
      llvm::SmallBitVector seen(read.getNumEntries());
      for (size_t j = 0; j < access.getNumEntries(); ++j) {
        if (access.isSlice(j))
          return {};
        auto d = dyn_cast<AffineDimExpr>(access.getLowerBounds(j)[0]);
        if (!d || seen.test(d.getPosition()))
          return {};
        unsigned dim = d.getPosition();
        seen.set(dim);
        covered.set(dim);
        auto lo = read.getLowerBounds(dim), hi = read.getUpperBounds(dim);
        lbs.emplace_back(lo.begin(), lo.end());
        ubs.emplace_back(hi.begin(), hi.end());
        if (read.isSlice(dim))
          leading.push_back(getAffineDimExpr(llvm::find(sliced, dim) - sliced.begin(), ctx));
      }
      auto newAccess = AccessAttr::fromEntries(ctx, read.getNumDims(), read.getNumSymbols(),
                                               lbs, ubs);
      AffineMap old = product.getMatchingIndexingMap(operand);
      llvm::SmallVector<AffineExpr> results(leading);
      for (AffineExpr x : old.getResults())
        results.push_back(x.shiftDims(old.getNumDims(), s));
      maps.push_back(AffineMap::get(s + old.getNumDims(), 0, results, ctx));
      inputs.push_back(e.getInputs()[arg]);
      accesses.push_back(newAccess);
      std::optional<int64_t> elements = pointElements(e.getInputs()[arg].getType());
      if (!elements)
        return {};
      stored += *elements;
    }
    // A summed dim no input varies along would count each term once per
    // point of it (and leave its loop without a bound).
    for (unsigned dim : sliced)
      if (!covered.test(dim))
        return {};
    // Only when the inputs hold less per point than the product did, or,
    // with over-steps, when the sum is over the steps of a dynamic dim: the
    // product's store along them is as long as its inputs' (a dynamic dim
    // has no partial sums), and one product over all the steps replaces a
    // small one per step plus the sum of their outputs. Its inputs are
    // then stored over the steps (the forward's activations usually are
    // already, for the backward; the gradient flowing back becomes a new
    // store of T points).
    std::optional<int64_t> held = pointElements(e.getResult().getType());
    if (!held || (stored >= *held && !(overSteps && sumsOverSteps(r, e, sliced))))
      return {};
    AffineMap out = product.getIndexingMapsArray().back();
    maps.push_back(out.shiftDims(s));

    OpBuilder b(r);
    auto node = createNode(b, r.getLoc(), r.getResult().getType(), inputs, accesses,
                           r.getConditions().getValue(), r.getSymbols(), r.getNameAttr());
    Block *block = new Block();
    node.getCases()[0].push_back(block);
    llvm::SmallVector<Value> args;
    for (auto [value, access] : llvm::zip(inputs, accesses))
      args.push_back(block->addArgument(
          accessedType(cast<ValueType>(value.getType()), cast<AccessAttr>(access)), r.getLoc()));
    OpBuilder bb = OpBuilder::atBlockEnd(block);
    IRMapping map;
    for (Operation &op : eBody.without_terminator()) // empty, zero, fill
      if (&op != product.getOperation())
        bb.clone(op, map);
    llvm::SmallVector<utils::IteratorType> iterators(s, utils::IteratorType::reduction);
    llvm::append_range(iterators, product.getIteratorTypesArray());
    auto contracted = linalg::GenericOp::create(
        bb, product.getLoc(), product->getResultTypes(), args,
        ValueRange{map.lookup(product.getDpsInits()[0])}, maps, iterators);
    // The region may use the body's constants (cloned above, in `map`).
    product.getRegion().cloneInto(&contracted.getRegion(), map);
    // linalg.index k named the product's loop k, now loop s + k.
    contracted.getRegion().walk(
        [&](linalg::IndexOp index) { index.setDim(index.getDim() + s); });
    YieldOp::create(bb, r.getLoc(), contracted->getResult(0));

    r.getResult().replaceAllUsesWith(node.getResult());
    r->dropAllReferences();
    r->erase();
    return e;
  }
};

} // namespace
