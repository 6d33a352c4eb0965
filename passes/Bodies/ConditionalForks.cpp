//===- ConditionalForks.cpp - pdg-conditional-forks -----------------------===//
//
// The pool runs one parallel region at a time: a region reached inside
// another runs on its caller alone (runtime/lib/threads.c). The driver's
// loop over the sequences of a batch calls the node bodies, whose large
// products are split into tiles of their own (pdg-parallelize-large-ops).
// With one sequence (decode at batch 1) the outer loop would leave all but
// one thread idle: it runs on the caller and the tiles inside fork. With
// more, the sequences share out the threads and the bodies run their ops
// whole (a tile run as a team of one costs a call, and its loops, outlined,
// no longer see that their buffers are apart, so LLVM leaves some of them
// scalar). Which is known only at run time: the pass notes each such
// loop's points for the bodies (pdg_loop_enter, which pdg_ops_split reads
// in them) and gives the loop an if clause, points >= pdg_fork_from().
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "RuntimeFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGCONDITIONALFORKS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using mlir::pdg::runtimeFunction;

namespace {

constexpr StringLiteral kForkFrom = "pdg_fork_from";
constexpr StringLiteral kLoopEnter = "pdg_loop_enter";
constexpr StringLiteral kLoopLeave = "pdg_loop_leave";

/// The functions that hold a parallel region, or call one that does
/// (transitively, through direct calls by symbol).
llvm::DenseSet<StringAttr> forkingFunctions(ModuleOp module) {
  llvm::DenseMap<StringAttr, SmallVector<StringAttr>> callers; // callee -> callers
  SmallVector<StringAttr> work;
  llvm::DenseSet<StringAttr> forking;
  for (auto fn : module.getOps<func::FuncOp>()) {
    StringAttr name = fn.getSymNameAttr();
    bool forks = false;
    fn.walk([&](Operation *op) {
      if (isa<omp::ParallelOp>(op))
        forks = true;
      else if (auto call = dyn_cast<CallOpInterface>(op))
        if (auto callee = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee()))
          callers[callee.getRootReference()].push_back(name);
    });
    if (forks && forking.insert(name).second)
      work.push_back(name);
  }
  while (!work.empty()) {
    StringAttr callee = work.pop_back_val();
    for (StringAttr caller : callers.lookup(callee))
      if (forking.insert(caller).second)
        work.push_back(caller);
  }
  return forking;
}

/// True if `region`'s ops hold a parallel region or call a forking function.
bool reachesFork(omp::ParallelOp parallel, const llvm::DenseSet<StringAttr> &forking) {
  bool found = false;
  parallel.getRegion().walk([&](Operation *op) {
    if (isa<omp::ParallelOp>(op)) {
      found = true;
    } else if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
      found = callee && forking.contains(callee.getRootReference());
    }
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// The one loop nest a region shares out (convert-scf-to-openmp's form:
/// omp.parallel { omp.wsloop { omp.loop_nest } }), if its bounds are
/// defined outside the region.
omp::LoopNestOp sharedLoop(omp::ParallelOp parallel) {
  omp::LoopNestOp found;
  int count = 0;
  parallel.getRegion().walk([&](omp::LoopNestOp nest) {
    if (nest->getParentOfType<omp::ParallelOp>() == parallel) {
      found = nest;
      ++count;
    }
  });
  if (count != 1 || !isa_and_present<omp::WsloopOp>(found->getParentOp()))
    return {};
  for (Value v : found->getOperands())
    if (parallel->isAncestor(v.getParentRegion()->getParentOp()))
      return {};
  return found;
}

/// The points of `nest`, computed before `parallel`: the product over its
/// loops of max(0, ceil((ub - lb (+ 1 if inclusive)) / step)).
Value points(OpBuilder &b, Location loc, omp::LoopNestOp nest) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value total = one;
  for (auto [lb, ub, step] :
       llvm::zip(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(), nest.getLoopSteps())) {
    auto index = [&](Value v) -> Value {
      return v.getType().isIndex() ? v : arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    };
    Value span = arith::SubIOp::create(b, loc, index(ub), index(lb));
    if (nest.getLoopInclusive())
      span = arith::AddIOp::create(b, loc, span, one);
    Value n = arith::CeilDivSIOp::create(b, loc, span, index(step));
    n = arith::MaxSIOp::create(b, loc, n, zero);
    total = arith::MulIOp::create(b, loc, total, n);
  }
  return total;
}

struct ConditionalForks : mlir::pdg::impl::PdgConditionalForksBase<ConditionalForks> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<StringAttr> forking = forkingFunctions(module);
    // Regions that reach another, with the loop nest each shares out (null
    // where it has none at its top).
    SmallVector<std::pair<omp::ParallelOp, omp::LoopNestOp>> outer;
    module.walk([&](omp::ParallelOp parallel) {
      if (parallel.getIfExpr() || !reachesFork(parallel, forking))
        return;
      outer.push_back({parallel, sharedLoop(parallel)});
    });
    if (outer.empty())
      return;
    MLIRContext *ctx = &getContext();
    Type index = IndexType::get(ctx);
    func::FuncOp from = runtimeFunction(module, kForkFrom, FunctionType::get(ctx, {}, {index}));
    func::FuncOp enter =
        runtimeFunction(module, kLoopEnter, FunctionType::get(ctx, {index}, {index}));
    func::FuncOp leave = runtimeFunction(module, kLoopLeave, FunctionType::get(ctx, {index}, {}));
    if (!from || !enter || !leave)
      return signalPassFailure();
    for (auto [parallel, nest] : outer) {
      OpBuilder b(parallel);
      Location loc = parallel.getLoc();
      // The bodies inside read the points (pdg_ops_split): -1 where the
      // region's loop is not known, and they split their ops as before.
      Value n = nest ? points(b, loc, nest)
                     : arith::ConstantIndexOp::create(b, loc, -1).getResult();
      Value previous = func::CallOp::create(b, loc, enter, n).getResult(0);
      b.setInsertionPointAfter(parallel);
      func::CallOp::create(b, loc, leave, previous);
      if (!nest)
        continue;
      b.setInsertionPoint(parallel);
      Value least = func::CallOp::create(b, loc, from).getResult(0);
      Value fork = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, n, least);
      parallel.getIfExprMutable().assign(fork);
      ++numConditional;
    }
  }
};

} // namespace
