//===- SplitOverWorkers.cpp - pdg-split-over-workers ----------------------===//
//
// Data parallelism by partitioning a dim: `dim=p` splits p's points over
// the ranks of a new worker dim `w < world W`. Each rank runs the same
// program (SPMD) on its own share of p: every value over p becomes a value
// over [w, p] (w declared just before p), whose store on a rank holds that
// rank's P points, so after the split the symbol P is each rank's share.
//
// What crosses the ranks is found from the reads of p:
// - a node over p reads p at its own point (anything else is refused: the
//   point would be on another rank);
// - a node not over p that only sums all of p (`%x[0 : P]` read by a zero
//   fill plus one linalg.generic adding it up, the frontend's `.sum()`,
//   a weight's gradient, a loss's numerator, a count) becomes the rank's
//   partial sum, over w, and a `pdg.all_reduce sum` over w takes its place
//   for every reader: the same sum over the whole of p, on every rank;
// - a node not over p that reads all of p only for its extent (the shape
//   of an adjoint's `expand_to`) holds the rank's rows: it becomes a value
//   over w, as does everything computed from it, until a sum's all-reduce.
// A value not over p that ends up over w this way and is an output or
// ends a dynamic dim would differ between ranks: refused. So is any other
// use of all of p (a mean that divides by the extent: write it as a sum
// over a sum of ones), a case condition on p, and `P` in other accesses.
//
// Then a node that only adds up (or transposes, copies) all-reduced sums
// that nothing else reads runs on the ranks' partial sums, and one
// all-reduce of its result replaces theirs: one all-reduce per weight's
// gradient, not one per contribution to it (the shared prefill's positions
// and the steps after, a tied embedding's lookup and head).
//
// Coordinates along p stay the rank's own (they index the rank's rows),
// except those marked `{pdg.global}` (the frontend's sampling keys): those
// become `w * P + p`, the coordinate in the whole program, so that the
// ranks draw the samples one process draws. For that, a node `<p>_share`
// over [w] holds P (the extent of a small `<p>_points` over [w, p]), and
// such nodes read it.
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "NodeBuilder.h"
#include "Passes.h"
#include "PdgOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGSPLITOVERWORKERS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

constexpr llvm::StringLiteral kPass = "pdg-split-over-workers: ";

/// Whether `v` is a zero constant (float or integer, scalar).
bool isZero(Value v) {
  Attribute attr;
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    attr = c.getValue();
  if (auto f = dyn_cast_or_null<FloatAttr>(attr))
    return f.getValue().isZero();
  if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
    return i.getValue().isZero();
  return false;
}

/// Whether `generic` adds up its only input `arg` into a zero-filled
/// output, reducing at least loop `axis` (the input's map is the identity).
bool isSumOf(linalg::GenericOp generic, Value arg, unsigned axis) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInputs()[0] != arg)
    return false;
  auto fill = generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !isZero(fill.getInputs()[0]))
    return false;
  auto maps = generic.getIndexingMapsArray();
  if (!maps[0].isIdentity() || axis >= generic.getNumLoops() ||
      generic.getIteratorTypesArray()[axis] != utils::IteratorType::reduction)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  Operation &add = body.front();
  if (!isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  Value in = body.getArgument(0), out = body.getArgument(1);
  bool both = (add.getOperand(0) == in && add.getOperand(1) == out) ||
              (add.getOperand(0) == out && add.getOperand(1) == in);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return both && yield.getNumOperands() == 1 && yield.getOperand(0) == add.getResult(0);
}

/// How a node not over the split dim uses its read of all of it.
enum class WholeUse { Sum, Extent, Other };

/// `arg` holds all of p along its axis `axis`: is it only summed (the
/// node's whole body: a fill, the sum, the yield), or used only for its
/// extents (tensor.dim feeding shapes), or something else?
WholeUse classify(NodeOp node, BlockArgument arg, unsigned axis) {
  bool sum = false, extent = false;
  for (OpOperand &use : arg.getUses()) {
    Operation *user = use.getOwner();
    if (auto generic = dyn_cast<linalg::GenericOp>(user); generic && isSumOf(generic, arg, axis)) {
      auto yield = cast<YieldOp>(generic->getBlock()->getTerminator());
      if (yield.getValue() != generic.getResult(0) || generic->getBlock() != arg.getOwner())
        return WholeUse::Other;
      sum = true;
    } else if (auto dim = dyn_cast<tensor::DimOp>(user)) {
      if (!llvm::all_of(dim->getUsers(), [](Operation *u) { return isa<tensor::EmptyOp>(u); }))
        return WholeUse::Other;
      extent = true;
    } else if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      // An input the generic does not read (only its shape): the
      // frontend's broadcasts pass the template this way.
      BlockArgument inner = generic.getMatchingBlockArgument(&use);
      if (!inner || !inner.use_empty() || !generic.isDpsInput(&use))
        return WholeUse::Other;
      extent = true;
    } else {
      return WholeUse::Other;
    }
  }
  if (sum && extent)
    return WholeUse::Other;
  if (sum)
    return node.getCases().size() == 1 && node.getInputs().size() == 1 ? WholeUse::Sum
                                                                       : WholeUse::Other;
  return WholeUse::Extent;
}

/// Whether `generic` is linear in its inputs (all in `linear`): parallel
/// loops, inputs read through permutations into a fresh output, and a body
/// of sums, differences and negations of the inputs' elements only.
bool isLinearGeneric(linalg::GenericOp generic, const llvm::DenseSet<Value> &linear) {
  if (generic.getNumDpsInits() != 1 ||
      !generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      generic.getNumReductionLoops() != 0)
    return false;
  for (Value in : generic.getDpsInputs())
    if (!linear.contains(in))
      return false;
  auto maps = generic.getIndexingMapsArray();
  if (!maps.back().isIdentity() ||
      !llvm::all_of(llvm::ArrayRef(maps).drop_back(), [](AffineMap m) { return m.isPermutation(); }))
    return false;
  Block &body = generic.getRegion().front();
  llvm::DenseSet<Value> terms;
  for (unsigned k = 0; k < generic.getNumDpsInputs(); ++k)
    terms.insert(body.getArgument(k));
  for (Operation &op : body.without_terminator()) {
    if (!isa<arith::AddFOp, arith::SubFOp, arith::NegFOp>(op) ||
        !llvm::all_of(op.getOperands(), [&](Value v) { return terms.contains(v); }))
      return false;
    terms.insert(op.getResult(0));
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return yield.getNumOperands() == 1 && terms.contains(yield.getOperand(0));
}

/// Whether a node's case `block` yields a linear function of its
/// arguments: copies, transposes, sums, differences and negations of them,
/// with no constant term. Applied to each rank's partial sums and then
/// summed over the ranks, such a node gives what it gives on the sums.
bool isLinearBody(Block &block) {
  llvm::DenseSet<Value> linear(block.getArguments().begin(), block.getArguments().end());
  auto fresh = [](Value init) { return init.getDefiningOp<tensor::EmptyOp>() != nullptr; };
  for (Operation &op : block) {
    if (isa<tensor::EmptyOp>(op))
      continue;
    if (auto yield = dyn_cast<YieldOp>(op))
      return linear.contains(yield.getValue());
    bool ok = false;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
      ok = linear.contains(transpose.getInput()) && fresh(transpose.getInit());
    else if (isa<linalg::AddOp, linalg::SubOp>(op)) {
      auto named = cast<linalg::LinalgOp>(op);
      ok = named.getNumDpsInits() == 1 && fresh(named.getDpsInits()[0]) &&
           llvm::all_of(named.getDpsInputs(), [&](Value v) { return linear.contains(v); });
    } else if (auto generic = dyn_cast<linalg::GenericOp>(op))
      ok = isLinearGeneric(generic, linear);
    if (!ok || op.getNumResults() != 1)
      return false;
    linear.insert(op.getResult(0));
  }
  return false;
}

struct SplitOverWorkers : mlir::pdg::impl::PdgSplitOverWorkersBase<SplitOverWorkers> {
  using Base::Base;

  GraphOp graph;
  StringRef split;      // the dim split over the ranks
  std::string symbol;   // its bound symbol
  llvm::StringMap<unsigned> order; // dim -> declaration index (w just before p)
  llvm::DenseSet<Value> gains;     // values that become over w
  llvm::SetVector<NodeOp> sums;    // nodes that become partial sums

  bool over(Value v, StringRef d) {
    return cast<ValueType>(v.getType()).getDimPosition(d) >= 0;
  }

  InFlightDiagnostic error(Operation *op) {
    signalPassFailure();
    return op->emitOpError() << kPass;
  }

  void runOnOperation() override {
    graph = getOperation();
    MLIRContext *ctx = &getContext();
    split = dim;
    if (split.empty()) {
      error(graph) << "say which dim to split over the ranks: dim=NAME";
      return;
    }
    DimOp target = graph.lookupDim(split);
    if (!target) {
      error(graph) << "no dim '" << split << "' in @" << graph.getSymName();
      return;
    }
    for (DimOp d : graph.getBodyBlock().getOps<DimOp>())
      if (d.getWorker()) {
        error(d) << "the graph already has a worker dim '" << d.getSymName()
                 << "' (one per program): split a dim of a program without one";
        return;
      }
    if (target.getKind() != BoundKind::Launch) {
      error(target) << "'" << split << "' is a "
                    << (target.getKind() == BoundKind::Static ? "static" : "dynamic")
                    << " dim; only a launch dim (`< launch P`, its extent given per run) "
                       "can be split, as each rank gives its own share";
      return;
    }
    symbol = target.getBound()->str();
    if (DimOp taken = graph.lookupDim(worker)) {
      error(taken) << "a dim '" << worker << "' exists already: choose another worker=NAME";
      return;
    }
    for (DimOp d : graph.getBodyBlock().getOps<DimOp>())
      if ((d.getBound() && *d.getBound() == world) || d.getSymName() == world) {
        error(d) << "'" << world << "' is already a name of the graph: choose another world=NAME";
        return;
      }
    unsigned k = 0;
    for (DimOp d : graph.getBodyBlock().getOps<DimOp>()) {
      if (d == target)
        order[worker] = k++;
      order[d.getSymName()] = k++;
    }
    if (failed(analyze()))
      return;
    rewrite(target);
    (void)ctx;
  }

  /// Checks every read of the split dim and finds the values that become
  /// over w; reports what cannot be split.
  LogicalResult analyze() {
    for (Operation &op : graph.getBodyBlock()) {
      if (op.getNumResults() == 1 && isa<ValueType>(op.getResult(0).getType()) &&
          over(op.getResult(0), split))
        gains.insert(op.getResult(0));
      if (isCollective(&op))
        return error(&op) << "collectives need a worker dim, which the graph has not";
    }
    for (Operation &op : graph.getBodyBlock()) {
      auto node = dyn_cast<NodeOp>(op);
      auto udf = dyn_cast<UdfOp>(op);
      if (!node && !udf)
        continue;
      auto type = cast<ValueType>(op.getResult(0).getType());
      int64_t own = type.getDimPosition(split);
      ArrayAttr symbols = node ? node.getSymbols() : udf.getSymbols();
      auto names = symbolNames(symbols);
      llvm::SmallVector<std::string> dimNames;
      for (StringAttr d : type.getDomain())
        dimNames.push_back(d.str());
      int64_t sym = -1;
      for (auto [i, s] : llvm::enumerate(names))
        if (s == symbol)
          sym = i;
      auto usesSplit = [&](AffineExpr e) {
        return (own >= 0 && e.isFunctionOfDim(own)) || (sym >= 0 && e.isFunctionOfSymbol(sym));
      };
      if (node)
        for (unsigned c = 0; c < node.getCases().size(); ++c)
          for (AffineExpr e : node.getCondition(c).getConstraints())
            if (usesSplit(e))
              return error(node) << "a case condition reads '" << split << "' or '" << symbol
                                 << "'; split, each rank numbers its own points from 0 "
                                    "and '"
                                 << symbol << "' is its share";
      ValueRange inputs = node ? node.getInputs() : udf.getInputs();
      for (auto [i, input] : llvm::enumerate(inputs)) {
        auto access = cast<AccessAttr>(node ? node.getAccesses()[i] : udf.getAccesses()[i]);
        auto producer = cast<ValueType>(input.getType());
        int64_t at = producer.getDimPosition(split);
        for (size_t j = 0; j < access.getNumEntries(); ++j) {
          if ((int64_t)j == at)
            continue;
          for (AffineExpr e : llvm::concat<const AffineExpr>(access.getLowerBounds(j),
                                                              access.getUpperBounds(j)))
            if (usesSplit(e))
              return error(&op) << "reads " << formatAccess(access, dimNames, names)
                                << ": an index computed from '" << split << "' or '" << symbol
                                << "' differs once each rank holds its share of '" << split
                                << "'";
        }
        if (at < 0)
          continue;
        auto lbs = access.getLowerBounds(at);
        if (own >= 0) {
          auto d = dyn_cast<AffineDimExpr>(lbs[0]);
          if (access.isSlice(at) || !d || d.getPosition() != own)
            return error(&op) << "reads " << formatAccess(access, dimNames, names)
                              << ", another point of '" << split
                              << "' than its own, which may be on another rank; only reads "
                                 "at the own point, or sums over all of '"
                              << split << "', can be split";
          continue;
        }
        auto ubs = access.getUpperBounds(at);
        auto zero = dyn_cast_if_present<AffineConstantExpr>(lbs.empty() ? AffineExpr() : lbs[0]);
        auto whole = dyn_cast_if_present<AffineSymbolExpr>(ubs.empty() ? AffineExpr() : ubs[0]);
        if (!access.isSlice(at) || lbs.size() != 1 || ubs.size() != 1 || !zero ||
            zero.getValue() != 0 || !whole || (int64_t)whole.getPosition() != sym)
          return error(&op) << "reads " << formatAccess(access, dimNames, names)
                            << ", part of '" << split << "'; only all of it (0 : " << symbol
                            << ") can be read from outside '" << split << "', to sum it";
        if (!node)
          return error(&op) << "a host callback reads all of '" << split
                            << "', which is split over the ranks; call it per point of '"
                            << split << "' instead";
        // The block argument: its position among the case's arguments.
        unsigned c = 0;
        while (c + 1 < node.getCases().size() && node.getCaseInputStart(c + 1) <= i)
          ++c;
        BlockArgument arg = node.getCases()[c].getArgument(i - node.getCaseInputStart(c));
        unsigned axis = 0; // slices come first in the argument, in entry order
        for (int64_t j = 0; j < at; ++j)
          axis += access.isSlice(j);
        switch (classify(node, arg, axis)) {
        case WholeUse::Sum:
          sums.insert(node);
          gains.insert(node.getResult());
          break;
        case WholeUse::Extent:
          gains.insert(node.getResult());
          break;
        case WholeUse::Other:
          return error(node) << "reads all of '" << split
                             << "' and does more than add it up; split over the ranks, "
                                "only sums over it are combined (an all-reduce): make the "
                                "sum a node of its own (a mean: divide a sum by a sum of "
                                "ones)";
        }
      }
    }
    // What reads a value that differs between ranks differs too, up to
    // the sums' all-reduces.
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation &op : graph.getBodyBlock()) {
        if (!isa<NodeOp, UdfOp>(op) || gains.contains(op.getResult(0)))
          continue;
        for (Value in : op.getOperands())
          if (gains.contains(in) && !sums.contains(dyn_cast_or_null<NodeOp>(in.getDefiningOp()))) {
            gains.insert(op.getResult(0));
            changed = true;
            break;
          }
      }
    }
    for (Operation &op : graph.getBodyBlock()) {
      Value v;
      StringRef what;
      if (auto out = dyn_cast<OutputOp>(op)) {
        v = out.getValue();
        what = "an output";
      } else if (auto d = dyn_cast<DimOp>(op); d && d.getUntil()) {
        v = d.getUntil();
        what = "the end of a dynamic dim";
      }
      if (v && gains.contains(v) && !over(v, split) &&
          !sums.contains(dyn_cast_or_null<NodeOp>(v.getDefiningOp())))
        return error(&op) << "is " << what << " computed from each rank's own points of '"
                          << split << "' other than through a sum over them, so it would "
                          << "differ between ranks";
    }
    return success();
  }

  /// `type` with w in its domain, in declaration order.
  ValueType withWorker(ValueType type) {
    llvm::SmallVector<StringAttr> domain(type.getDomain());
    auto at = llvm::find_if(domain, [&](StringAttr d) { return order[d] > order[worker]; });
    domain.insert(at, StringAttr::get(&getContext(), worker));
    return ValueType::get(&getContext(), domain, type.getPointType());
  }

  /// The dims of `old` renumbered for `fresh` (old dim i -> its position
  /// in the fresh domain).
  llvm::SmallVector<AffineExpr> renumber(ValueType old, ValueType fresh) {
    llvm::SmallVector<AffineExpr> map;
    for (StringAttr d : old.getDomain())
      map.push_back(getAffineDimExpr(fresh.getDimPosition(d), &getContext()));
    return map;
  }

  /// A read's access from a consumer of domain `fresh` (was `old`) of a
  /// producer that `gainsW`: w is read at the consumer's own point.
  AccessAttr reaccess(AccessAttr a, ValueType old, ValueType fresh, ValueType producerOld,
                      bool producerGains) {
    MLIRContext *ctx = &getContext();
    auto map = renumber(old, fresh);
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
    for (size_t j = 0; j < a.getNumEntries(); ++j) {
      llvm::SmallVector<AffineExpr> lo, hi;
      for (AffineExpr e : a.getLowerBounds(j))
        lo.push_back(e.replaceDims(map));
      for (AffineExpr e : a.getUpperBounds(j))
        hi.push_back(e.replaceDims(map));
      lbs.push_back(lo);
      ubs.push_back(hi);
    }
    if (producerGains) {
      int64_t wAt = withWorker(producerOld).getDimPosition(worker);
      lbs.insert(lbs.begin() + wAt,
                 llvm::SmallVector<AffineExpr>{getAffineDimExpr(fresh.getDimPosition(worker), ctx)});
      ubs.insert(ubs.begin() + wAt, llvm::SmallVector<AffineExpr>{});
    }
    return AccessAttr::fromEntries(ctx, fresh.getRank(), a.getNumSymbols(), lbs, ubs);
  }

  IntegerSetAttr recondition(IntegerSet set, ValueType old, ValueType fresh) {
    auto map = renumber(old, fresh);
    llvm::SmallVector<AffineExpr> cs;
    llvm::SmallVector<bool> eqs;
    for (unsigned c = 0; c < set.getNumConstraints(); ++c) {
      cs.push_back(set.getConstraint(c).replaceDims(map));
      eqs.push_back(set.isEq(c));
    }
    return IntegerSetAttr::get(IntegerSet::get(fresh.getRank(), set.getNumSymbols(), cs, eqs));
  }

  void rewrite(DimOp target) {
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    b.setInsertionPoint(target);
    DimOp::create(b, target.getLoc(), worker, BoundKind::Launch, IntegerAttr(),
                  StringAttr::get(ctx, world), Value(), true);
    // A read sees the producer as it was (a sum's readers will read its
    // all-reduce, which is over the old domain).
    auto producerGains = [&](Value v) {
      return gains.contains(v) && !sums.contains(dyn_cast_or_null<NodeOp>(v.getDefiningOp()));
    };
    for (Operation &op : graph.getBodyBlock()) {
      auto node = dyn_cast<NodeOp>(op);
      auto udf = dyn_cast<UdfOp>(op);
      if (!node && !udf)
        continue;
      Value result = op.getResult(0);
      auto old = cast<ValueType>(result.getType());
      ValueType fresh = gains.contains(result) ? withWorker(old) : old;
      ValueRange inputs = node ? node.getInputs() : udf.getInputs();
      ArrayAttr accesses = node ? node.getAccesses() : udf.getAccesses();
      llvm::SmallVector<Attribute> updated;
      for (auto [input, attr] : llvm::zip(inputs, accesses)) {
        bool fromSum = sums.contains(node) && over(input, split);
        updated.push_back(reaccess(cast<AccessAttr>(attr), old, fresh,
                                   cast<ValueType>(input.getType()),
                                   producerGains(input) || fromSum));
      }
      op.setAttr("accesses", ArrayAttr::get(ctx, updated));
      if (node) {
        llvm::SmallVector<Attribute> conditions;
        for (unsigned c = 0; c < node.getCases().size(); ++c)
          conditions.push_back(recondition(node.getCondition(c), old, fresh));
        op.setAttr("conditions", ArrayAttr::get(ctx, conditions));
      }
    }
    for (Operation &op : graph.getBodyBlock())
      if (op.getNumResults() == 1 && gains.contains(op.getResult(0)))
        op.getResult(0).setType(withWorker(cast<ValueType>(op.getResult(0).getType())));
    // Each sum's readers read the sum over every rank.
    for (NodeOp sum : sums) {
      b.setInsertionPointAfter(sum);
      auto type = cast<ValueType>(sum.getResult().getType());
      llvm::SmallVector<StringAttr> domain;
      for (StringAttr d : type.getDomain())
        if (d.getValue() != worker)
          domain.push_back(d);
      std::string name = sum.getName() ? sum.getName()->str() : "sum";
      auto reduced = AllReduceOp::create(
          b, sum.getLoc(), ValueType::get(ctx, domain, type.getPointType()),
          ReductionAttr::get(ctx, Reduction::Sum), sum.getResult(),
          FlatSymbolRefAttr::get(ctx, worker), StringAttr::get(ctx, name));
      sum.setNameAttr(StringAttr::get(ctx, name + "_partial"));
      sum.getResult().replaceAllUsesExcept(reduced.getResult(), reduced);
    }
    combineSums();
    globalCoordinates(target);
  }

  /// The all-reduce (a sum over w) that `v` is, when `reader` is its only
  /// reader.
  AllReduceOp soleSum(Value v, NodeOp reader) {
    auto reduce = v.getDefiningOp<AllReduceOp>();
    if (!reduce || reduce.getReduction() != Reduction::Sum || reduce.getOver() != worker)
      return {};
    for (Operation *user : reduce.getResult().getUsers())
      if (user != reader)
        return {};
    return reduce;
  }

  /// One all-reduce where several would be summed: a node that only adds
  /// up (or transposes, copies) all-reduced sums that nothing else reads
  /// (the contributions to one weight's gradient: the shared prefill's
  /// positions and the steps after, a tied embedding's two uses) runs on
  /// the ranks' partial sums instead, and one all-reduce of its result
  /// takes its place. Its result has the size of each input, so this never
  /// sends more; repeated until no node changes, so a chain of such nodes
  /// ends in one all-reduce.
  void combineSums() {
    MLIRContext *ctx = &getContext();
    for (bool changed = true; changed;) {
      changed = false;
      for (NodeOp node : llvm::make_early_inc_range(graph.getBodyBlock().getOps<NodeOp>())) {
        // One case, at every point: the all-reduce then reads a value
        // defined everywhere, as those of the sums do.
        if (node.getCases().size() != 1 || !isAlwaysTrue(node.getCondition(0)) ||
            node.getInputs().empty() || over(node.getResult(), worker))
          continue;
        llvm::SmallVector<AllReduceOp> reduces;
        for (Value in : node.getInputs())
          if (AllReduceOp reduce = soleSum(in, node))
            reduces.push_back(reduce);
        if (reduces.size() != node.getInputs().size() ||
            !isLinearBody(node.getCases()[0].front()))
          continue;
        ValueType old = node.getValueType(), fresh = withWorker(old);
        llvm::SmallVector<Attribute> accesses;
        for (auto [k, reduce] : llvm::enumerate(reduces)) {
          accesses.push_back(reaccess(cast<AccessAttr>(node.getAccesses()[k]), old, fresh,
                                      reduce.getValueType(), true));
          node.getInputsMutable()[k].set(reduce.getInput());
        }
        node->setAttr("accesses", ArrayAttr::get(ctx, accesses));
        node->setAttr("conditions",
                      ArrayAttr::get(ctx, {recondition(node.getCondition(0), old, fresh)}));
        node.getResult().setType(fresh);
        for (AllReduceOp reduce : llvm::SetVector<AllReduceOp>(reduces.begin(), reduces.end()))
          reduce.erase(); // read by this node only, now through its partial
        OpBuilder b(ctx);
        b.setInsertionPointAfter(node);
        std::string name = node.getName() ? node.getName()->str() : "sum";
        auto reduced = AllReduceOp::create(b, node.getLoc(), old,
                                           ReductionAttr::get(ctx, Reduction::Sum),
                                           node.getResult(), FlatSymbolRefAttr::get(ctx, worker),
                                           StringAttr::get(ctx, name));
        node.setNameAttr(StringAttr::get(ctx, name + "_partial"));
        node.getResult().replaceAllUsesExcept(reduced.getResult(), reduced);
        changed = true;
      }
    }
  }

  /// `pdg.point @p {pdg.global}` -> w * P + p, P read from `<p>_share`.
  void globalCoordinates(DimOp target) {
    MLIRContext *ctx = &getContext();
    llvm::SmallVector<NodeOp> readers;
    for (NodeOp node : graph.getBodyBlock().getOps<NodeOp>()) {
      bool any = false;
      node.walk([&](PointOp p) { any |= p.getDim() == split && p->hasAttr("pdg.global"); });
      if (any)
        readers.push_back(node);
    }
    if (readers.empty())
      return;
    OpBuilder b(ctx);
    b.setInsertionPointAfter(target);
    Location loc = target.getLoc();
    auto i64 = IntegerType::get(ctx, 64);
    auto scalar = RankedTensorType::get({}, i64);
    auto always = [&](unsigned nd) { return IntegerSetAttr::get(getAlwaysTrueSet(nd, 0, ctx)); };
    // <p>_points over [w, p] (nothing), <p>_share over [w]: its extent.
    auto wp = ValueType::get(ctx, {StringAttr::get(ctx, worker), StringAttr::get(ctx, split)},
                             RankedTensorType::get({}, IntegerType::get(ctx, 8)));
    auto points = createNode(b, loc, wp, {}, {}, {always(2)}, b.getArrayAttr({}),
                             b.getStringAttr(split + "_points"));
    {
      Block *block = new Block();
      points.getCases()[0].push_back(block);
      OpBuilder bb = OpBuilder::atBlockEnd(block);
      Value zero = arith::ConstantOp::create(
          bb, loc, DenseElementsAttr::get(wp.getPointType(), bb.getI8IntegerAttr(0)));
      YieldOp::create(bb, loc, zero);
    }
    auto wOnly = [&](Type point) {
      return ValueType::get(ctx, {StringAttr::get(ctx, worker)}, cast<RankedTensorType>(point));
    };
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
    lbs.push_back({getAffineDimExpr(0, ctx)});
    ubs.push_back({});
    lbs.push_back({getAffineConstantExpr(0, ctx)});
    ubs.push_back({getAffineSymbolExpr(0, ctx)});
    auto slice = AccessAttr::fromEntries(ctx, 1, 1, lbs, ubs);
    auto share = createNode(b, loc, wOnly(scalar), {points.getResult()}, {slice},
                            {IntegerSetAttr::get(getAlwaysTrueSet(1, 1, ctx))},
                            b.getArrayAttr({b.getStringAttr(symbol)}),
                            b.getStringAttr(split + "_share"));
    {
      Block *block = new Block();
      share.getCases()[0].push_back(block);
      Value rows = block->addArgument(RankedTensorType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8)), loc);
      OpBuilder bb = OpBuilder::atBlockEnd(block);
      Value n = tensor::DimOp::create(bb, loc, rows, 0);
      Value n64 = arith::IndexCastOp::create(bb, loc, i64, n);
      Value t = tensor::FromElementsOp::create(bb, loc, scalar, ValueRange{n64});
      YieldOp::create(bb, loc, t);
    }
    for (NodeOp node : readers)
      readShare(node, share.getResult());
  }

  /// Rebuilds `node` with a read of `share` at its own w in every case,
  /// and its marked coordinates along p made global.
  void readShare(NodeOp node, Value share) {
    MLIRContext *ctx = &getContext();
    auto type = node.getValueType();
    unsigned nd = type.getRank();
    unsigned ns = node.getSymbols().size();
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs{{getAffineDimExpr(type.getDimPosition(worker), ctx)}};
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> ubs{{}};
    auto read = AccessAttr::fromEntries(ctx, nd, ns, lbs, ubs);
    llvm::SmallVector<Value> operands;
    llvm::SmallVector<Attribute> accesses;
    for (unsigned c = 0; c < node.getCases().size(); ++c) {
      unsigned begin = node.getCaseInputStart(c);
      unsigned count = node.getCases()[c].getNumArguments();
      for (unsigned i = begin; i < begin + count; ++i) {
        operands.push_back(node.getInputs()[i]);
        accesses.push_back(node.getAccesses()[i]);
      }
      operands.push_back(share);
      accesses.push_back(read);
    }
    OpBuilder b(node);
    llvm::SmallVector<Attribute> conditions(node.getConditions().begin(),
                                            node.getConditions().end());
    auto fresh = createNode(b, node.getLoc(), type, operands, accesses, conditions,
                            node.getSymbols(), node.getNameAttr());
    for (unsigned c = 0; c < node.getCases().size(); ++c) {
      Block &old = node.getCases()[c].front();
      Block *block = new Block();
      fresh.getCases()[c].push_back(block);
      for (BlockArgument a : old.getArguments())
        a.replaceAllUsesWith(block->addArgument(a.getType(), a.getLoc()));
      Value extent = block->addArgument(cast<ValueType>(share.getType()).getPointType(),
                                        node.getLoc());
      block->getOperations().splice(block->end(), old.getOperations());
      llvm::SmallVector<PointOp> marked;
      block->walk([&](PointOp p) {
        if (p.getDim() == split && p->hasAttr("pdg.global"))
          marked.push_back(p);
      });
      for (PointOp p : marked) {
        OpBuilder pb(p);
        Location loc = p.getLoc();
        Value rank = PointOp::create(pb, loc, pb.getIndexType(), FlatSymbolRefAttr::get(ctx, worker));
        Value n = tensor::ExtractOp::create(pb, loc, extent, ValueRange{});
        Value rows = arith::IndexCastOp::create(pb, loc, pb.getIndexType(), n);
        Value before = arith::MulIOp::create(pb, loc, rank, rows);
        Value local = PointOp::create(pb, loc, pb.getIndexType(), p.getDimAttr());
        Value global = arith::AddIOp::create(pb, loc, before, local);
        p.getResult().replaceAllUsesWith(global);
        p.erase();
      }
    }
    node.getResult().replaceAllUsesWith(fresh.getResult());
    node.erase();
  }
};

} // namespace
