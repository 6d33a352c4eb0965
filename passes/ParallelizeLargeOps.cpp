//===- ParallelizeLargeOps.cpp - pdg-parallelize-large-ops ----------------===//
//
// The driver runs the points of a node in parallel, but a node with one
// point (a contraction over all points, a batched product) is a single body
// call. Its large linalg ops are split here along their first parallel loop
// into one tile per thread of the pool, as an scf.parallel that
// convert-scf-to-openmp hands to the pool (pdg.lowering.threads).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGPARALLELIZELARGEOPS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

constexpr StringLiteral kSlots = "pdg_thread_slots";
constexpr StringLiteral kInParallelLoop = "pdg.in_parallel_loop";
/// What a dynamic extent counts as when weighing an op's work.
constexpr int64_t kDynamicGuess = 64;

/// The iteration points of `op`, dynamic extents counted as kDynamicGuess
/// (saturating: only the comparison with the threshold matters).
int64_t work(linalg::LinalgOp op) {
  int64_t total = 1;
  for (int64_t extent : op.getStaticLoopRanges()) {
    int64_t e = ShapedType::isDynamic(extent) ? kDynamicGuess : extent;
    total = total > (int64_t(1) << 40) / std::max<int64_t>(e, 1) ? int64_t(1) << 40 : total * e;
  }
  return total;
}

/// The loop to split: the first parallel loop whose extent may exceed 1.
std::optional<unsigned> splitLoop(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (linalg::isParallelIterator(it) && (ShapedType::isDynamic(ranges[i]) || ranges[i] > 1))
      return i;
  return std::nullopt;
}

/// True if `op` already runs on many threads: inside a parallel loop, or in
/// a function the driver calls inside one (marked `pdg.in_parallel_loop`).
/// Splitting it again would only add the cost of a team of one per call.
bool runsInParallel(linalg::LinalgOp op) {
  if (op->getParentOfType<scf::ParallelOp>())
    return true;
  auto fn = op->getParentOfType<FunctionOpInterface>();
  return fn && fn->hasAttr(kInParallelLoop);
}

/// `@pdg_thread_slots() -> index`, declared in `module` if it is not yet.
func::FuncOp slotsFunction(ModuleOp module) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(kSlots))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto type = b.getFunctionType({}, {b.getIndexType()});
  auto fn = func::FuncOp::create(b, module.getLoc(), kSlots, type);
  fn.setPrivate();
  return fn;
}

struct ParallelizeLargeOps
    : mlir::pdg::impl::PdgParallelizeLargeOpsBase<ParallelizeLargeOps> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 0 && work(op) >= minWork &&
          splitLoop(op) && !runsInParallel(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    func::FuncOp slots = slotsFunction(module);
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      unsigned dim = *splitLoop(op);
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      // Tile size ceil(extent / threads): one tile per thread.
      SmallVector<Range> loopRanges = op.createLoopRanges(rewriter, loc);
      Value extent = getValueOrCreateConstantIndexOp(rewriter, loc, loopRanges[dim].size);
      Value threads = func::CallOp::create(rewriter, loc, slots, ValueRange{}).getResult(0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      Value size = arith::CeilDivUIOp::create(rewriter, loc, extent, threads);
      // An empty extent would give tiles of size 0, which tiling reads as
      // "not tiled": at least 1.
      size = arith::MaxUIOp::create(rewriter, loc, size, one);
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      SmallVector<Value, 4> sizes(op.getNumLoops(), zero);
      sizes[dim] = size;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(sizes).setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
      FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled))
        continue; // stays whole, on one thread
      rewriter.eraseOp(op);
      ++numSplit;
    }
  }
};

} // namespace
