//===- Incrementalize.cpp - pdg-incrementalize ----------------------------===//
//
// A node that reads a whole sequence once it is finished, `x[b, 0 : T]`, and
// reduces it along the sequence (sum, product, max, min), becomes a running
// accumulator over the sequence dim plus a read of its last step:
//
//   r[b]       = reduce(f(x[b, 0 : T]))
// =>
//   acc[b, t]  = reduce(f(x[b, t : t + 1]))                     (t == 0)
//   acc[b, t]  = acc[b, t - 1] (+) reduce(f(x[b, t : t + 1]))   (t >= 1)
//   r[b]       = acc[b, T - 1]
//
// so the work runs per step, alongside whatever produces x (generation),
// and nothing keeps the whole sequence for it. Valid because the reduction's
// combiner is associative and its initial value is the combiner's identity;
// anything else is left alone.
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "NodeBuilder.h"
#include "Passes.h"
#include "PdgOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGINCREMENTALIZE
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

/// What makes a node incrementalizable.
struct Match {
  unsigned input;         // operand index of the whole-sequence read
  unsigned entry;         // its slice entry (a producer dim)
  StringRef dim;          // the sequence dim
  linalg::GenericOp reduction;
  Operation *combiner;    // the scalar combiner in the reduction's region
};

/// True if `value` is a constant splat/scalar equal to the identity of the
/// combiner `op`.
bool isIdentityOf(Operation *op, Attribute value) {
  auto elems = dyn_cast<DenseElementsAttr>(value);
  Attribute scalar = elems && elems.isSplat() ? elems.getSplatValue<Attribute>() : value;
  if (auto f = dyn_cast<FloatAttr>(scalar)) {
    double v = f.getValueAsDouble();
    if (isa<arith::AddFOp>(op))
      return v == 0.0;
    if (isa<arith::MulFOp>(op))
      return v == 1.0;
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
      return std::isinf(v) && v < 0;
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
      return std::isinf(v) && v > 0;
    return false;
  }
  if (auto i = dyn_cast<IntegerAttr>(scalar)) {
    if (isa<arith::AddIOp>(op))
      return i.getValue().isZero();
    if (isa<arith::MulIOp>(op))
      return i.getValue().isOne();
  }
  return false;
}

/// The node's value is one linalg.generic that reduces the whole-sequence
/// argument along its leading (sequence) dim with an associative combiner,
/// starting from the combiner's identity (a linalg.fill).
std::optional<Match> matchNode(NodeOp node, GraphOp graph) {
  if (node.getCases().size() != 1 || !isAlwaysTrue(node.getCondition(0)))
    return std::nullopt;
  ValueType type = node.getValueType();
  Block &body = node.getCases()[0].front();
  auto yield = cast<YieldOp>(body.getTerminator());
  auto generic = yield.getValue().getDefiningOp<linalg::GenericOp>();
  if (!generic || generic->getBlock() != &body || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1)
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(generic.getDpsInputs()[0]);
  if (!arg || arg.getOwner() != &body)
    return std::nullopt;
  unsigned input = arg.getArgNumber();
  // The body must work for any sequence length (a `?` leading dim): it is
  // reused on one step at a time.
  auto argType = cast<RankedTensorType>(arg.getType());
  if (argType.getRank() == 0 || !argType.isDynamicDim(0))
    return std::nullopt;
  AccessAttr access = node.getAccess(input);
  auto producer = cast<ValueType>(node.getInputs()[input].getType());
  // Exactly one slice, `0 : bound` along a dim the node does not have.
  std::optional<unsigned> entry;
  for (size_t i = 0; i < access.getNumEntries(); ++i)
    if (access.isSlice(i)) {
      if (entry)
        return std::nullopt;
      entry = i;
    }
  if (!entry)
    return std::nullopt;
  StringRef dim = producer.getDomain()[*entry].getValue();
  DimOp dimOp = graph.lookupDim(dim);
  if (!dimOp || type.getDimPosition(dim) >= 0)
    return std::nullopt;
  auto lbs = access.getLowerBounds(*entry), ubs = access.getUpperBounds(*entry);
  auto lb = lbs.size() == 1 ? dyn_cast<AffineConstantExpr>(lbs[0]) : AffineConstantExpr();
  if (!lb || lb.getValue() != 0 || ubs.size() != 1)
    return std::nullopt;
  bool upToBound = false;
  if (auto sym = dyn_cast<AffineSymbolExpr>(ubs[0]))
    upToBound = dimOp.getBound() &&
                cast<StringAttr>(node.getSymbols()[sym.getPosition()]).getValue() ==
                    *dimOp.getBound();
  else if (auto c = dyn_cast<AffineConstantExpr>(ubs[0]))
    upToBound = dimOp.getKind() == BoundKind::Static && dimOp.getSizeAttr() &&
                c.getValue() == dimOp.getSizeAttr().getInt();
  if (!upToBound)
    return std::nullopt;
  // The slice's leading dim is a reduction dim of the generic, dropped by
  // the output map.
  AffineMap inMap = generic.getIndexingMapsArray()[0];
  AffineMap outMap = generic.getIndexingMapsArray()[1];
  auto lead = dyn_cast<AffineDimExpr>(inMap.getResult(0));
  if (!lead || generic.getIteratorTypesArray()[lead.getPosition()] !=
                   utils::IteratorType::reduction ||
      outMap.isFunctionOfDim(lead.getPosition()))
    return std::nullopt;
  // The region yields combiner(x, out) with x independent of out.
  Block &region = generic.getRegion().front();
  auto ly = cast<linalg::YieldOp>(region.getTerminator());
  Operation *combiner = ly.getOperand(0).getDefiningOp();
  BlockArgument out = region.getArgument(1);
  if (!combiner || combiner->getNumOperands() != 2 || !out.hasOneUse() ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp>(combiner) ||
      (combiner->getOperand(0) != out && combiner->getOperand(1) != out))
    return std::nullopt;
  // The init is a fill with the identity.
  auto fill = generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  Attribute init;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&init)) ||
      !isIdentityOf(combiner, init))
    return std::nullopt;
  return Match{input, *entry, dim, generic, combiner};
}

/// `name` positions: the graph's dims of `names`, in declaration order.
llvm::SmallVector<StringAttr> orderedDims(GraphOp graph, llvm::ArrayRef<StringAttr> have,
                                          StringRef extra) {
  llvm::SmallVector<StringAttr> out;
  for (auto dim : graph.getBodyBlock().getOps<DimOp>())
    if (dim.getSymName() == extra ||
        llvm::any_of(have, [&](StringAttr s) { return s.getValue() == dim.getSymName(); }))
      out.push_back(StringAttr::get(graph.getContext(), dim.getSymName()));
  return out;
}

struct Incrementalize : mlir::pdg::impl::PdgIncrementalizeBase<Incrementalize> {
  void runOnOperation() override {
    GraphOp graph = getOperation();
    llvm::SmallVector<std::pair<NodeOp, Match>> work;
    for (auto node : graph.getBodyBlock().getOps<NodeOp>())
      if (auto m = matchNode(node, graph))
        work.push_back({node, *m});
    for (auto &[node, m] : work)
      rewrite(graph, node, m);
    numIncrementalized += work.size();
  }

  void rewrite(GraphOp graph, NodeOp node, const Match &m) {
    MLIRContext *ctx = &getContext();
    OpBuilder b(node);
    Location loc = node.getLoc();
    ValueType type = node.getValueType();
    auto accDims = orderedDims(graph, type.getDomain(), m.dim);
    unsigned nd = accDims.size(), ns = node.getSymbols().size();
    unsigned tPos = 0;
    llvm::SmallVector<AffineExpr> dimMap; // node dim i -> acc dim
    for (auto [i, d] : llvm::enumerate(accDims)) {
      if (d.getValue() == m.dim)
        tPos = i;
      else
        dimMap.push_back(getAffineDimExpr(i, ctx));
    }
    llvm::SmallVector<AffineExpr> syms;
    for (unsigned s = 0; s < ns; ++s)
      syms.push_back(getAffineSymbolExpr(s, ctx));
    AffineExpr t = getAffineDimExpr(tPos, ctx);

    // The accumulator's inputs: the node's, re-indexed over its dims, with
    // the whole-sequence read narrowed to the current step `t : t + 1`.
    llvm::SmallVector<Attribute> inAccesses;
    for (unsigned i = 0, e = node.getInputs().size(); i < e; ++i) {
      AccessAttr a = node.getAccess(i);
      llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
      for (size_t j = 0; j < a.getNumEntries(); ++j) {
        llvm::SmallVector<AffineExpr> lo, hi;
        if (i == m.input && j == m.entry) {
          lo.push_back(t);
          hi.push_back(t + 1);
        } else {
          for (AffineExpr x : a.getLowerBounds(j))
            lo.push_back(x.replaceDimsAndSymbols(dimMap, syms));
          for (AffineExpr x : a.getUpperBounds(j))
            hi.push_back(x.replaceDimsAndSymbols(dimMap, syms));
        }
        lbs.push_back(lo);
        ubs.push_back(hi);
      }
      inAccesses.push_back(AccessAttr::fromEntries(ctx, nd, ns, lbs, ubs));
    }
    auto accType = ValueType::get(ctx, accDims, type.getPointType());
    llvm::SmallVector<AffineExpr> selfPoint;
    for (unsigned i = 0; i < nd; ++i)
      selfPoint.push_back(i == tPos ? t - 1 : getAffineDimExpr(i, ctx));
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> selfLbs, selfUbs;
    for (AffineExpr e : selfPoint) {
      selfLbs.push_back({e});
      selfUbs.push_back({});
    }
    AccessAttr selfAccess = AccessAttr::fromEntries(ctx, nd, ns, selfLbs, selfUbs);

    llvm::SmallVector<Value> inputs(node.getInputs().begin(), node.getInputs().end());
    llvm::SmallVector<Value> operands(inputs);  // case t == 0
    operands.append(inputs);                    // case t >= 1 ...
    operands.push_back(node.getResult());       // ... and acc[t - 1] (patched below)
    llvm::SmallVector<Attribute> accesses(inAccesses);
    accesses.append(inAccesses.begin(), inAccesses.end());
    accesses.push_back(selfAccess);
    IntegerSet first = IntegerSet::get(nd, ns, {t}, {true});
    IntegerSet rest = IntegerSet::get(nd, ns, {t - 1}, {false});
    std::string name = (node.getName() ? node.getName()->str() : "reduce") + "_running";
    auto acc = createNode(b, loc, accType, operands, accesses,
                          {IntegerSetAttr::get(first), IntegerSetAttr::get(rest)},
                          node.getSymbols(), StringAttr::get(ctx, name));
    acc->setOperand(2 * inputs.size(), acc.getResult());

    // Bodies: the node's body over one step, the step's read cast back to
    // the `?` sequence type the body was written for.
    auto buildBody = [&](Region &region, bool combine) {
      Block *block = new Block();
      region.push_back(block);
      Block &old = node.getCases()[0].front();
      IRMapping map;
      OpBuilder bb = OpBuilder::atBlockEnd(block);
      for (unsigned i = 0; i < inputs.size(); ++i) {
        Type argType = accessedType(cast<ValueType>(inputs[i].getType()),
                                    cast<AccessAttr>(inAccesses[i]));
        Value arg = block->addArgument(argType, loc);
        Value mapped = arg;
        if (argType != old.getArgument(i).getType())
          mapped = tensor::CastOp::create(bb, loc, old.getArgument(i).getType(), arg);
        map.map(old.getArgument(i), mapped);
      }
      Value prev;
      if (combine)
        prev = block->addArgument(type.getPointType(), loc);
      for (Operation &op : old.without_terminator())
        bb.clone(op, map);
      Value step = map.lookup(cast<YieldOp>(old.getTerminator()).getValue());
      if (combine) {
        OperationState c(loc, m.combiner->getName());
        c.addOperands({prev, step});
        c.addTypes(step.getType());
        step = bb.create(c)->getResult(0);
      }
      YieldOp::create(bb, loc, step);
    };
    buildBody(acc.getCases()[0], false);
    buildBody(acc.getCases()[1], true);

    // The node itself now reads the accumulator's last step.
    DimOp dimOp = graph.lookupDim(m.dim);
    llvm::SmallVector<Attribute> readSymbols;
    AffineExpr end;
    if (dimOp.getKind() == BoundKind::Static) {
      end = getAffineConstantExpr(dimOp.getSizeAttr().getInt() - 1, ctx);
    } else {
      readSymbols.push_back(StringAttr::get(ctx, *dimOp.getBound()));
      end = getAffineSymbolExpr(0, ctx) - 1;
    }
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> lastLbs, lastUbs;
    for (StringAttr d : accDims) {
      lastLbs.push_back({d.getValue() == m.dim
                             ? end
                             : getAffineDimExpr(type.getDimPosition(d.getValue()), ctx)});
      lastUbs.push_back({});
    }
    AccessAttr lastAccess = AccessAttr::fromEntries(ctx, type.getRank(), readSymbols.size(),
                                                    lastLbs, lastUbs);
    auto result = createNode(
        b, loc, type, acc.getResult(), {lastAccess},
        {IntegerSetAttr::get(getAlwaysTrueSet(type.getRank(), readSymbols.size(), ctx))},
        ArrayAttr::get(ctx, readSymbols), node.getNameAttr());
    Block *rb = new Block();
    result.getCases()[0].push_back(rb);
    Value lastArg = rb->addArgument(type.getPointType(), loc);
    OpBuilder rbb = OpBuilder::atBlockEnd(rb);
    YieldOp::create(rbb, loc, lastArg);

    node.getResult().replaceAllUsesWith(result.getResult());
    node->dropAllReferences();
    node->erase();
  }
};

} // namespace
