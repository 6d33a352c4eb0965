//===- Vectorize.cpp - pdg-vectorize --------------------------------------===//
//
// Folds a parallel dim (the batch `b`) into the point type: a node over
// [b, t] with points tensor<P> becomes a node over [t] with points
// tensor<B x P>, so one step processes the whole batch (a matrix product
// instead of B matrix-vector products).
//
// Reads follow: a vectorized producer is read without its b entry (the
// whole batch), an input over b through the slice [0 : B]. Bodies are
// batched op by op ("vmap"): linalg.generic gets a leading parallel loop
// over the batch, an operand's batch dim sits where its read puts it (after
// the slices of other dims), and shape ops (expand/collapse/reshape,
// transpose, softmax, tensor.dim) shift their dims by one. A node that
// reads nothing varying along b (a constant) keeps its point type. Outputs and the
// `until` values of dynamic dims keep their per-sequence form through small
// unpack nodes over [b, ...] that take row b, so every sequence still ends
// on its own; batched nodes run while any sequence is alive, and what they
// compute for ended sequences is never read.
//
// Elementwise arith/math on tensors are first rewritten as linalg.generic
// (the same computation). What cannot be batched (udfs, conditions on b,
// other ops on batched values) is reported at the op, and no node is
// vectorized.
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "NodeBuilder.h"
#include "Passes.h"
#include "PdgOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGVECTORIZE
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

/// A value of the batched body and where its batch dim is (-1: none).
struct Batched {
  Value value;
  int64_t pos = -1;
  bool batched() const { return pos >= 0; }
};

/// `map` with a new leading loop (d0) and, if `pos` >= 0, d0 inserted as
/// result `pos`.
AffineMap withBatchLoop(AffineMap map, int64_t pos) {
  MLIRContext *ctx = map.getContext();
  llvm::SmallVector<AffineExpr> results;
  for (AffineExpr e : map.getResults())
    results.push_back(e.shiftDims(map.getNumDims(), 1));
  if (pos >= 0)
    results.insert(results.begin() + pos, getAffineDimExpr(0, ctx));
  return AffineMap::get(map.getNumDims() + 1, map.getNumSymbols(), results, ctx);
}

/// The reassociation of an expand/collapse with a leading batch dim added
/// to both sides; `rank` is that of the side with more dims. A rank-0 side
/// (no groups) puts every dim, the batch's too, in one group.
llvm::SmallVector<ReassociationIndices>
batchedGroups(llvm::ArrayRef<ReassociationIndices> old, int64_t rank) {
  llvm::SmallVector<ReassociationIndices> groups;
  if (old.empty()) {
    ReassociationIndices all;
    for (int64_t i = 0; i <= rank; ++i)
      all.push_back(i);
    groups.push_back(all);
    return groups;
  }
  groups.push_back({0});
  for (const ReassociationIndices &g : old) {
    ReassociationIndices shifted;
    for (int64_t i : g)
      shifted.push_back(i + 1);
    groups.push_back(shifted);
  }
  return groups;
}

RankedTensorType withBatch(RankedTensorType t, int64_t batch, int64_t pos = 0) {
  llvm::SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + pos, batch);
  return RankedTensorType::get(shape, t.getElementType());
}

/// Batches the body of one case.
class BodyBatcher {
public:
  BodyBatcher(OpBuilder &b, int64_t staticBatch, StringRef dim)
      : b(b), staticBatch(staticBatch), dim(dim) {}

  /// Maps block argument `from` to `to`, batched at `pos` (or not).
  void bindArgument(Value from, Value to, int64_t pos) {
    values[from] = {to, pos};
    if (pos >= 0 && !batchSize)
      batchValue = {to, pos};
  }

  /// A block argument holding the whole batch of an input: only its size.
  void bindBatchSource(Value arg) { batchValue = {arg, 0}; }

  LogicalResult batch(Block &old, RankedTensorType yieldType, bool varies) {
    for (Operation &op : old.without_terminator())
      if (failed(batchOp(op)))
        return failure();
    auto yield = cast<YieldOp>(old.getTerminator());
    Batched v = lookup(yield.getValue());
    Value out = v.value;
    if (!varies && v.batched())
      return yield.emitOpError("pdg-vectorize: internal error: a value that does not vary "
                               "along the dim came out batched");
    if (varies && !v.batched())
      out = broadcast(yield.getLoc(), v.value);
    else if (varies && v.pos != 0)
      out = leading(yield.getLoc(), v).value;
    if (out.getType() != yieldType)
      out = tensor::CastOp::create(b, yield.getLoc(), yieldType, out);
    YieldOp::create(b, yield.getLoc(), out);
    return success();
  }

private:
  OpBuilder &b;
  int64_t staticBatch; // the batch size, or ShapedType::kDynamic
  StringRef dim;
  llvm::DenseMap<Value, Batched> values;
  llvm::DenseSet<Value> batchPoints; // `pdg.point @b`: the batch index
  Batched batchValue;  // a batched block argument, to read B from
  Value batchSize;

  Batched lookup(Value v) {
    auto it = values.find(v);
    return it == values.end() ? Batched{v, -1} : it->second;
  }

  OpFoldResult batchExtent(Location loc) {
    if (!ShapedType::isDynamic(staticBatch))
      return b.getIndexAttr(staticBatch);
    if (!batchSize) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.getInsertionBlock());
      batchSize = tensor::DimOp::create(b, loc, batchValue.value, batchValue.pos);
    }
    return batchSize;
  }

  /// An empty tensor like `t` with the batch dim in front.
  Value batchedEmpty(Location loc, Value like) {
    auto t = cast<RankedTensorType>(like.getType());
    llvm::SmallVector<OpFoldResult> sizes{batchExtent(loc)};
    for (int64_t i = 0; i < t.getRank(); ++i)
      sizes.push_back(t.isDynamicDim(i) ? OpFoldResult(tensor::DimOp::create(b, loc, like, i))
                                        : OpFoldResult(b.getIndexAttr(t.getDimSize(i))));
    return tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
  }

  /// `v` with its batch dim moved to the front (a transpose if it is not).
  Batched leading(Location loc, Batched v) {
    if (v.pos <= 0)
      return v;
    auto t = cast<RankedTensorType>(v.value.getType());
    llvm::SmallVector<int64_t> perm{v.pos};
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != v.pos)
        perm.push_back(i);
    llvm::SmallVector<OpFoldResult> sizes;
    for (int64_t i : perm)
      sizes.push_back(t.isDynamicDim(i) ? OpFoldResult(tensor::DimOp::create(b, loc, v.value, i))
                                        : OpFoldResult(b.getIndexAttr(t.getDimSize(i))));
    Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
    Value moved = linalg::TransposeOp::create(b, loc, v.value, init, perm)->getResult(0);
    return {moved, 0};
  }

  /// `v` (unbatched) repeated along a new leading batch dim.
  Value broadcast(Location loc, Value v) {
    Value init = batchedEmpty(loc, v);
    return linalg::BroadcastOp::create(b, loc, v, init, llvm::ArrayRef<int64_t>{0})
        ->getResult(0);
  }

  /// The init of a batched op: batched as is, or made batched (an empty
  /// or filled empty tensor is recreated with the batch dim, else repeated).
  Value batchedInit(Location loc, Value oldInit) {
    Batched init = lookup(oldInit);
    if (init.batched())
      return init.value;
    if (auto empty = oldInit.getDefiningOp<tensor::EmptyOp>())
      return batchedEmpty(loc, init.value);
    if (auto fill = oldInit.getDefiningOp<linalg::FillOp>())
      if (fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
        Value empty = batchedEmpty(loc, init.value);
        return linalg::FillOp::create(b, loc, lookup(fill.getInputs()[0]).value, empty)
            .getResult(0);
      }
    return broadcast(loc, init.value);
  }

  bool anyBatched(Operation &op) {
    bool found = false;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (lookup(v).batched() || batchPoints.contains(v))
          found = true;
    });
    return found;
  }

  LogicalResult batchOp(Operation &op) {
    Location loc = op.getLoc();
    if (auto point = dyn_cast<PointOp>(op); point && point.getDim() == dim) {
      batchPoints.insert(point.getResult()); // only loop bodies may use it
      return success();
    }
    if (!anyBatched(op)) {
      IRMapping map;
      op.walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (values.count(v))
            map.map(v, values[v].value);
      });
      Operation *copy = b.clone(op, map);
      for (auto [from, to] : llvm::zip(op.getResults(), copy->getResults()))
        values[from] = {to, -1};
      return success();
    }
    if (auto g = dyn_cast<linalg::GenericOp>(op))
      return batchGeneric(g);
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      Value init = batchedInit(loc, fill.getOutputs()[0]);
      Value r = linalg::FillOp::create(b, loc, lookup(fill.getInputs()[0]).value, init)
                    .getResult(0);
      values[fill.getResult(0)] = {r, 0};
      return success();
    }
    if (auto red = dyn_cast<linalg::ReduceOp>(op)) {
      llvm::SmallVector<Value> ins, inits;
      for (Value in : red.getInputs()) {
        Batched v = leading(loc, lookup(in));
        ins.push_back(v.batched() ? v.value : broadcast(loc, v.value));
      }
      for (Value init : red.getInits())
        inits.push_back(batchedInit(loc, init));
      llvm::SmallVector<int64_t> dims;
      for (int64_t d : red.getDimensions())
        dims.push_back(d + 1);
      auto nr = linalg::ReduceOp::create(b, loc, ins, inits, dims,
                                         [](OpBuilder &, Location, ValueRange) {});
      // The combiner is the same: move a copy of it in.
      Region &body = nr.getCombiner();
      body.getBlocks().clear();
      IRMapping map;
      red.getCombiner().cloneInto(&body, map);
      for (auto [from, to] : llvm::zip(red.getResults(), nr.getResults()))
        values[from] = {to, 0};
      return success();
    }
    if (auto sm = dyn_cast<linalg::SoftmaxOp>(op)) {
      Batched in = leading(loc, lookup(sm.getInput()));
      Value init = batchedInit(loc, sm.getOutput());
      auto r = linalg::SoftmaxOp::create(b, loc, init.getType(), in.value, init,
                                         sm.getDimension() + 1);
      values[sm.getResult()[0]] = {r.getResult()[0], 0};
      return success();
    }
    if (auto tr = dyn_cast<linalg::TransposeOp>(op)) {
      Batched in = leading(loc, lookup(tr.getInput()));
      llvm::SmallVector<int64_t> perm{0};
      for (int64_t p : tr.getPermutation())
        perm.push_back(p + 1);
      Value init = batchedInit(loc, tr.getInit());
      auto r = linalg::TransposeOp::create(b, loc, in.value, init, perm);
      values[tr.getResult()[0]] = {r.getResult()[0], 0};
      return success();
    }
    if (auto ex = dyn_cast<tensor::ExpandShapeOp>(op)) {
      Batched in = leading(loc, lookup(ex.getSrc()));
      auto groups = batchedGroups(ex.getReassociationIndices(), ex.getResultType().getRank());
      llvm::SmallVector<OpFoldResult> shape{batchExtent(loc)};
      for (OpFoldResult s : ex.getMixedOutputShape())
        shape.push_back(isa<Value>(s) ? OpFoldResult(lookup(cast<Value>(s)).value) : s);
      auto type = withBatch(ex.getResultType(), staticBatch);
      auto r = tensor::ExpandShapeOp::create(b, loc, type, in.value, groups, shape);
      values[ex.getResult()] = {r.getResult(), 0};
      return success();
    }
    if (auto co = dyn_cast<tensor::CollapseShapeOp>(op)) {
      Batched in = leading(loc, lookup(co.getSrc()));
      auto groups = batchedGroups(co.getReassociationIndices(), co.getSrcType().getRank());
      auto r = tensor::CollapseShapeOp::create(b, loc, in.value, groups);
      values[co.getResult()] = {r.getResult(), 0};
      return success();
    }
    if (auto re = dyn_cast<tensor::ReshapeOp>(op)) {
      Batched in = leading(loc, lookup(re.getSource()));
      Batched shape = lookup(re.getShape());
      auto shapeType = cast<RankedTensorType>(re.getShape().getType());
      if (shape.batched() || !shapeType.hasStaticShape())
        return op.emitOpError("pdg-vectorize: this reshape cannot be batched");
      Type i = shapeType.getElementType();
      OpFoldResult bExtent = batchExtent(loc);
      Value bValue = isa<Value>(bExtent)
                         ? cast<Value>(bExtent)
                         : Value(arith::ConstantIndexOp::create(b, loc, staticBatch));
      llvm::SmallVector<Value> elems{arith::IndexCastOp::create(b, loc, i, bValue)};
      for (int64_t k = 0; k < shapeType.getDimSize(0); ++k) {
        Value idx = arith::ConstantIndexOp::create(b, loc, k);
        elems.push_back(tensor::ExtractOp::create(b, loc, shape.value, idx));
      }
      Value newShape = tensor::FromElementsOp::create(b, loc, elems);
      auto type = withBatch(cast<RankedTensorType>(re.getResultType()), staticBatch);
      auto r = tensor::ReshapeOp::create(b, loc, type, in.value, newShape);
      values[re.getResult()] = {r.getResult(), 0};
      return success();
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      Batched in = lookup(dim.getSource());
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        return op.emitOpError("pdg-vectorize: tensor.dim of a batched value needs a constant index");
      int64_t k = *index + (*index >= in.pos ? 1 : 0);
      auto r = tensor::DimOp::create(b, loc, in.value, k);
      values[dim.getResult()] = {r.getResult(), -1};
      return success();
    }
    return op.emitOpError("pdg-vectorize: cannot batch this op");
  }

  LogicalResult batchGeneric(linalg::GenericOp g) {
    Location loc = g.getLoc();
    llvm::SmallVector<Value> ins, outs;
    llvm::SmallVector<AffineMap> maps;
    for (OpOperand *in : g.getDpsInputOperands()) {
      Batched v = lookup(in->get());
      ins.push_back(v.value);
      maps.push_back(withBatchLoop(g.getMatchingIndexingMap(in), v.pos));
    }
    for (OpOperand &out : g.getDpsInitsMutable()) {
      outs.push_back(batchedInit(loc, out.get()));
      maps.push_back(withBatchLoop(g.getMatchingIndexingMap(&out), 0));
    }
    llvm::SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
    for (auto it : g.getIteratorTypesArray())
      iterators.push_back(it);
    llvm::SmallVector<Type> types;
    for (Value o : outs)
      types.push_back(o.getType());
    auto ng = linalg::GenericOp::create(b, loc, types, ins, outs, maps, iterators);
    // The body: indices shift by one; batched values captured from outside
    // are read at the batch index.
    IRMapping map;
    Region &region = ng.getRegion();
    b.cloneRegionBefore(g.getRegion(), region, region.end(), map);
    LogicalResult result = success();
    Value batchIndex;
    region.walk([&](Operation *inner) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        if (index.getResult() != batchIndex)
          index.setDim(index.getDim() + 1);
        return;
      }
      for (OpOperand &use : inner->getOpOperands()) {
        if (batchPoints.contains(use.get())) { // b is the batch loop's index
          if (!batchIndex) {
            OpBuilder ib = OpBuilder::atBlockBegin(&region.front());
            batchIndex = linalg::IndexOp::create(ib, loc, 0);
          }
          use.set(batchIndex);
          continue;
        }
        Batched v = lookup(use.get());
        if (v.value != use.get())
          use.set(v.value);
        if (!v.batched())
          continue;
        auto extract = dyn_cast<tensor::ExtractOp>(inner);
        if (!extract || use.getOperandNumber() != 0) {
          result = inner->emitOpError("pdg-vectorize: a batched value used in a loop body");
          continue;
        }
        OpBuilder ib(extract);
        Value batchIndex = linalg::IndexOp::create(ib, extract.getLoc(), 0);
        // The indices may be captured from the body too (its constants):
        // their batched body's copies, as for the operands above.
        llvm::SmallVector<Value> indices;
        for (Value index : extract.getIndices())
          indices.push_back(lookup(index).value);
        indices.insert(indices.begin() + v.pos, batchIndex);
        auto fresh = tensor::ExtractOp::create(ib, extract.getLoc(), v.value, indices);
        extract.getResult().replaceAllUsesWith(fresh.getResult());
        extract->erase();
        break;
      }
    });
    if (failed(result))
      return failure();
    for (auto [from, to] : llvm::zip(g.getResults(), ng.getResults()))
      values[from] = {to, 0};
    return success();
  }
};

struct Vectorize : mlir::pdg::impl::PdgVectorizeBase<Vectorize> {
  using PdgVectorizeBase::PdgVectorizeBase;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    DimOp dim = graph.lookupDim(this->dim);
    if (!dim) {
      // A misspelled dim would otherwise leave the graph silently unbatched.
      llvm::SmallVector<StringRef> dims;
      for (DimOp x : graph.getBodyBlock().getOps<DimOp>())
        dims.push_back(x.getSymName());
      InFlightDiagnostic d = graph.emitOpError()
                             << "pdg-vectorize: no dim '" << this->dim << "' to fold; ";
      if (dims.empty())
        d << "the graph has no dims";
      else
        d << "its dims: " << llvm::join(dims, ", ");
      if (llvm::any_of(this->dim, [](char c) { return c == ',' || c == '=' || c == ' '; }))
        d << " (pass options are separated by spaces: `pdg-vectorize{dim=b}`)";
      return signalPassFailure();
    }
    if (dim.getKind() != BoundKind::Static && dim.getKind() != BoundKind::Launch) {
      dim.emitOpError("pdg-vectorize folds a static or launch dim; '")
          << this->dim << "' is dynamic";
      return signalPassFailure();
    }
    findKept(graph);
    if (failed(check(graph)))
      return signalPassFailure();
    if (failed(rewrite(graph, dim)))
      return signalPassFailure();
  }

  bool over(ValueType t) { return t.getDimPosition(this->dim) >= 0; }

  /// Nodes that stay per-sequence: their body uses the coordinate along the
  /// dim as a scalar (`pdg.point` outside a loop body, e.g. a row picked by
  /// it), which has no batched form. Their readers read them whole
  /// (`[0 : B]`), as they read inputs over the dim, and they read batched
  /// values through the per-sequence rows.
  llvm::DenseSet<Operation *> kept;

  void findKept(GraphOp graph) {
    for (auto node : graph.getBodyBlock().getOps<NodeOp>()) {
      if (!over(node.getValueType()))
        continue;
      bool scalar = false;
      node->walk([&](PointOp point) {
        if (point.getDim() != this->dim)
          return;
        for (Operation *user : point->getUsers())
          if (!user->getParentOfType<linalg::GenericOp>())
            scalar = true;
      });
      if (scalar)
        kept.insert(node);
    }
  }

  bool isKept(Value v) { return v.getDefiningOp() && kept.contains(v.getDefiningOp()); }

  /// Preconditions, each reported at its op.
  LogicalResult check(GraphOp graph) {
    for (Operation &op : graph.getBodyBlock()) {
      if (auto udf = dyn_cast<UdfOp>(op); udf && over(cast<ValueType>(udf.getType())))
        return udf.emitOpError("pdg-vectorize: a udf over '")
               << this->dim << "' is called per point; it cannot be batched";
      auto typed = op.getNumResults() == 1 ? dyn_cast<ValueType>(op.getResult(0).getType())
                                           : ValueType();
      if (typed && over(typed) && typed.getDimPosition(this->dim) != 0)
        return op.emitOpError("pdg-vectorize: '")
               << this->dim << "' must be the first dim of the domain";
      auto node = dyn_cast<NodeOp>(op);
      if (!node || kept.contains(node))
        continue;
      bool nodeOver = over(node.getValueType());
      if (nodeOver)
        for (Attribute s : node.getSymbols()) {
          DimOp bounded = graph.lookupBoundSymbol(cast<StringAttr>(s).getValue());
          if (bounded && bounded.getUntil() &&
              over(cast<ValueType>(bounded.getUntil().getType())))
            return node.emitOpError("pdg-vectorize: reads ")
                   << cast<StringAttr>(s).getValue()
                   << ", a bound that differs from one '" << this->dim
                   << "' to the next; it cannot be batched";
        }
      for (unsigned k = 0; k < node.getCases().size(); ++k)
        if (nodeOver && node.getCondition(k).getNumDims() > 0 &&
            llvm::any_of(node.getCondition(k).getConstraints(),
                         [](AffineExpr e) { return e.isFunctionOfDim(0); }))
          return node.emitOpError("pdg-vectorize: a case condition depends on '")
                 << this->dim << "'";
      for (auto [i, input] : llvm::enumerate(node.getInputs())) {
        auto producer = cast<ValueType>(input.getType());
        if (!over(producer) || isKept(input))
          continue; // a kept node is read whole, as an input
        if (!nodeOver)
          continue; // it reads the per-sequence form (an unpack node, below)
        AccessAttr a = node.getAccess(i);
        auto lbs = a.getLowerBounds(0);
        auto d = dyn_cast<AffineDimExpr>(lbs.empty() ? AffineExpr() : lbs[0]);
        if (a.isSlice(0) || !d || d.getPosition() != 0)
          return node.emitOpError("pdg-vectorize: reads another coordinate of '")
                 << this->dim << "' than its own";
      }
    }
    return success();
  }

  LogicalResult rewrite(GraphOp graph, DimOp dim) {
    MLIRContext *ctx = &getContext();
    int64_t batch = dim.getKind() == BoundKind::Static ? dim.getSizeAttr().getInt()
                                                       : ShapedType::kDynamic;
    std::optional<StringRef> symbol = dim.getBound();
    llvm::SmallVector<NodeOp> nodes;
    for (auto node : graph.getBodyBlock().getOps<NodeOp>())
      if (over(node.getValueType()) && !kept.contains(node))
        nodes.push_back(node);
    if (nodes.empty())
      return success();
    // Elementwise arith/math on tensors become linalg.generic first (the
    // same computation), so that one rule batches them all.
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseToLinalgConversionPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (NodeOp node : nodes)
      for (Region &region : node.getCases())
        (void)applyPatternsGreedily(region, frozen);

    // A node varies along the dim if it reads an input over it or a node
    // that varies (to a fixpoint); the others are the same for every b and
    // keep their point type.
    llvm::DenseSet<Value> varies;
    for (bool changed = true; changed;) {
      changed = false;
      for (NodeOp node : nodes) {
        if (varies.contains(node.getResult()))
          continue;
        bool reads = llvm::any_of(node.getInputs(), [&](Value in) {
          return varies.contains(in) || isKept(in) ||
                 (isa<InputOp>(in.getDefiningOp()) && over(cast<ValueType>(in.getType())));
        });
        if (reads) {
          varies.insert(node.getResult());
          changed = true;
        }
      }
    }
    auto pointOf = [&](Value v, RankedTensorType point) {
      return varies.contains(v) ? withBatch(point, batch) : point;
    };

    // An input over [dim] alone: read whole, it tells a body the batch size.
    Value batchSource;
    for (auto input : graph.getBodyBlock().getOps<InputOp>()) {
      auto t = cast<ValueType>(input.getType());
      if (t.getRank() == 1 && over(t)) {
        batchSource = input.getResult();
        break;
      }
    }

    llvm::DenseMap<Value, Value> batched; // old node result -> new one
    llvm::SmallVector<NodeOp> made;
    OpBuilder b(ctx);
    for (NodeOp node : nodes) {
      b.setInsertionPoint(node);
      ValueType type = node.getValueType();
      llvm::SmallVector<Attribute> domain;
      for (StringAttr d : type.getDomain())
        if (d.getValue() != this->dim)
          domain.push_back(d);
      auto newType = ValueType::get(ctx, llvm::to_vector(llvm::map_range(domain, [](Attribute a) {
                                      return cast<StringAttr>(a);
                                    })),
                                    pointOf(node.getResult(), type.getPointType()));
      // Symbols: the old ones, and B for slices of inputs over the dim.
      llvm::SmallVector<Attribute> symbols(node.getSymbols().begin(), node.getSymbols().end());
      int64_t symbolPos = -1;
      auto needSymbol = [&]() -> AffineExpr {
        if (!ShapedType::isDynamic(batch))
          return getAffineConstantExpr(batch, ctx);
        if (symbolPos < 0) {
          for (auto [i, s] : llvm::enumerate(symbols))
            if (cast<StringAttr>(s).getValue() == *symbol)
              symbolPos = i;
          if (symbolPos < 0) {
            symbolPos = symbols.size();
            symbols.push_back(StringAttr::get(ctx, *symbol));
          }
        }
        return getAffineSymbolExpr(symbolPos, ctx);
      };
      unsigned nd = type.getRank() - 1;
      // Dims shift down by one (d0, the batch, is gone); symbols stay.
      llvm::SmallVector<AffineExpr> dimMap{getAffineConstantExpr(0, ctx)};
      for (unsigned i = 0; i < nd; ++i)
        dimMap.push_back(getAffineDimExpr(i, ctx));
      llvm::SmallVector<Attribute> accesses;
      using Bounds = llvm::SmallVector<llvm::SmallVector<AffineExpr>>;
      llvm::SmallVector<std::pair<Bounds, Bounds>> entries;
      llvm::SmallVector<int64_t> positions;
      llvm::SmallVector<Value> operands;
      auto addRead = [&](Value input, AccessAttr a) {
        auto producer = cast<ValueType>(input.getType());
        llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
        int64_t pos = -1;
        unsigned slicesBefore = 0;
        for (size_t j = 0; j < a.getNumEntries(); ++j) {
          bool batchEntry = over(producer) && j == 0;
          if (batchEntry && isa<NodeOp>(input.getDefiningOp()) && !isKept(input))
            continue; // the whole batch of a vectorized node
          llvm::SmallVector<AffineExpr> lo, hi;
          if (batchEntry) { // an input or a kept node: its slice [0 : B]
            lo.push_back(getAffineConstantExpr(0, ctx));
            hi.push_back(AffineExpr());
            pos = slicesBefore;
          } else {
            for (AffineExpr x : a.getLowerBounds(j))
              lo.push_back(x.replaceDims(dimMap));
            for (AffineExpr x : a.getUpperBounds(j))
              hi.push_back(x.replaceDims(dimMap));
          }
          if (!hi.empty())
            ++slicesBefore;
          lbs.push_back(lo);
          ubs.push_back(hi);
        }
        if (over(producer) && isa<NodeOp>(input.getDefiningOp()) && !isKept(input) &&
            varies.contains(input))
          pos = slicesBefore;
        for (auto &hi : ubs)
          for (AffineExpr &x : hi)
            if (!x)
              x = needSymbol();
        positions.push_back(pos);
        operands.push_back(input);
        entries.push_back({lbs, ubs});
      };
      // Reads case by case; a case of a varying node that reads nothing
      // batched (a constant base case) also reads the batch source, so that
      // its body knows the batch size.
      llvm::SmallVector<unsigned> caseStart;
      bool nodeVaries = varies.contains(node.getResult());
      for (unsigned k = 0; k < node.getCases().size(); ++k) {
        caseStart.push_back(operands.size());
        unsigned begin = node.getCaseInputStart(k);
        unsigned count = node.getCases()[k].front().getNumArguments();
        bool anyBatched = false;
        for (unsigned i = begin; i < begin + count; ++i) {
          addRead(node.getInputs()[i], node.getAccess(i));
          anyBatched |= positions.back() >= 0;
        }
        if (nodeVaries && ShapedType::isDynamic(batch) && !anyBatched) {
          if (!batchSource)
            return node.emitOpError("pdg-vectorize: a case reads nothing over '")
                   << this->dim << "' and no input over ['" << this->dim
                   << "'] alone gives the batch size";
          operands.push_back(batchSource);
          positions.push_back(0);
          entries.push_back({{{getAffineConstantExpr(0, ctx)}}, {{needSymbol()}}});
        }
      }
      caseStart.push_back(operands.size());
      // Built once the symbols are known (a slice [0 : B] may add B).
      unsigned ns = symbols.size();
      for (auto &[lbs, ubs] : entries)
        accesses.push_back(AccessAttr::fromEntries(ctx, nd, ns, lbs, ubs));
      llvm::SmallVector<Attribute> conditions;
      for (unsigned k = 0; k < node.getCases().size(); ++k) {
        IntegerSet set = node.getCondition(k);
        llvm::SmallVector<AffineExpr> cs;
        llvm::SmallVector<bool> eqs;
        for (unsigned c = 0; c < set.getNumConstraints(); ++c) {
          cs.push_back(set.getConstraint(c).replaceDims(dimMap));
          eqs.push_back(set.isEq(c));
        }
        conditions.push_back(IntegerSetAttr::get(IntegerSet::get(nd, ns, cs, eqs)));
      }
      auto fresh = createNode(b, node.getLoc(), newType, operands, accesses, conditions,
                              ArrayAttr::get(ctx, symbols), node.getNameAttr());
      made.push_back(fresh);
      batched[node.getResult()] = fresh.getResult();
      // Bodies.
      for (unsigned k = 0; k < node.getCases().size(); ++k) {
        Block &old = node.getCases()[k].front();
        Block *block = new Block();
        fresh.getCases()[k].push_back(block);
        OpBuilder bb = OpBuilder::atBlockEnd(block);
        BodyBatcher batcher(bb, batch, this->dim);
        unsigned start = caseStart[k];
        for (unsigned i = 0; i < old.getNumArguments(); ++i) {
          unsigned input = start + i;
          auto producer = cast<ValueType>(operands[input].getType());
          ValueType readType = producer;
          if (auto it = batched.find(operands[input]); it != batched.end())
            readType = cast<ValueType>(it->second.getType());
          else if (isa_and_nonnull<NodeOp>(operands[input].getDefiningOp()) && over(producer) &&
                   !isKept(operands[input]))
            readType = ValueType::get(ctx,
                                      llvm::to_vector(llvm::drop_begin(producer.getDomain())),
                                      pointOf(operands[input], producer.getPointType()));
          Type argType = accessedType(readType, cast<AccessAttr>(accesses[input]));
          Value arg = block->addArgument(argType, old.getArgument(i).getLoc());
          batcher.bindArgument(old.getArgument(i), arg, positions[input]);
        }
        if (caseStart[k + 1] - start > old.getNumArguments()) { // the batch source, last
          unsigned input = caseStart[k + 1] - 1;
          auto readType = cast<ValueType>(operands[input].getType());
          Type argType = accessedType(readType, cast<AccessAttr>(accesses[input]));
          batcher.bindBatchSource(block->addArgument(argType, node.getLoc()));
        }
        if (failed(batcher.batch(old, newType.getPointType(), varies.contains(node.getResult())))) {
          // The new nodes read each other and hold half-built bodies.
          for (NodeOp m : made)
            m->dropAllReferences();
          for (NodeOp m : made)
            m->erase();
          return failure();
        }
      }
    }
    // Reads of vectorized nodes now read their batched form.
    for (NodeOp m : made)
      for (OpOperand &use : m->getOpOperands())
        if (auto it = batched.find(use.get()); it != batched.end())
          use.set(it->second);
    // Outputs, `until` values and readers not over the dim (a loss over
    // the whole batch) keep the per-sequence form: row b.
    llvm::DenseSet<Operation *> rebuilt;
    for (NodeOp node : nodes)
      rebuilt.insert(node);
    auto perSequence = [&](OpOperand &use) { return !rebuilt.contains(use.getOwner()); };
    for (NodeOp node : nodes) {
      if (!llvm::any_of(node->getUses(), perSequence))
        continue;
      b.setInsertionPointAfter(batched[node.getResult()].getDefiningOp());
      NodeOp unpack = makeUnpack(b, node, batched[node.getResult()],
                                 varies.contains(node.getResult()));
      node.getResult().replaceUsesWithIf(unpack.getResult(), perSequence);
    }
    for (NodeOp node : nodes)
      node->dropAllReferences();
    for (NodeOp node : nodes)
      node->erase();
    return success();
  }

  /// A node over the old domain taking row b of the batched value.
  NodeOp makeUnpack(OpBuilder &b, NodeOp old, Value batchedValue, bool varies) {
    MLIRContext *ctx = &getContext();
    ValueType type = old.getValueType();
    unsigned nd = type.getRank();
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
    for (unsigned i = 1; i < nd; ++i) {
      lbs.push_back({getAffineDimExpr(i, ctx)});
      ubs.push_back({});
    }
    auto access = AccessAttr::fromEntries(ctx, nd, 0, lbs, ubs);
    std::string name = (old.getName() ? old.getName()->str() : "value") + "_row";
    auto unpack = createNode(b, old.getLoc(), type, batchedValue, {access},
                             {IntegerSetAttr::get(getAlwaysTrueSet(nd, 0, ctx))},
                             ArrayAttr::get(ctx, {}), StringAttr::get(ctx, name));
    Block *block = new Block();
    unpack.getCases()[0].push_back(block);
    auto rowsType = cast<ValueType>(batchedValue.getType()).getPointType();
    Value rows = block->addArgument(rowsType, old.getLoc());
    OpBuilder bb = OpBuilder::atBlockEnd(block);
    if (!varies) { // the same for every b
      YieldOp::create(bb, old.getLoc(), rows);
      return unpack;
    }
    Value row = PointOp::create(bb, old.getLoc(), bb.getIndexType(),
                                FlatSymbolRefAttr::get(ctx, this->dim));
    RankedTensorType point = type.getPointType();
    llvm::SmallVector<OpFoldResult> offsets{row}, sizes{bb.getIndexAttr(1)}, strides;
    for (int64_t i = 0; i < point.getRank(); ++i) {
      offsets.push_back(bb.getIndexAttr(0));
      sizes.push_back(point.isDynamicDim(i)
                          ? OpFoldResult(tensor::DimOp::create(bb, old.getLoc(), rows, i + 1))
                          : OpFoldResult(bb.getIndexAttr(point.getDimSize(i))));
    }
    strides.assign(point.getRank() + 1, bb.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(bb, old.getLoc(), point, rows, offsets, sizes,
                                                 strides);
    YieldOp::create(bb, old.getLoc(), slice);
    return unpack;
  }
};

} // namespace
