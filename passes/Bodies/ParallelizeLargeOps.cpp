//===- ParallelizeLargeOps.cpp - pdg-parallelize-large-ops ----------------===//
//
// The driver runs the points of a node in parallel, but a node with one
// point (a contraction over all points, a batched product) is a single body
// call. Its large linalg ops are split here along their first parallel loop
// into tiles, as an scf.parallel that convert-scf-to-openmp hands to the
// pool (pdg.lowering.threads).
//
// The tiles do not depend on the number of threads. Elements on a tile's
// edge may be computed by other code than those inside: a vectorized loop's
// scalar remainder (glibc's scalar expf and libmvec's vector one round some
// inputs differently), a register tile's remainder in
// pdg-register-tile-contractions. With one tile per thread, which elements
// those are changed with the thread count, and so did the bits. The tile
// size is a function of the extent alone, and the pool shares out the
// tiles.
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

constexpr StringLiteral kInParallelLoop = "pdg.in_parallel_loop";
/// What a dynamic extent counts as when weighing an op's work.
constexpr int64_t kDynamicGuess = 64;
/// The most tiles a loop is cut into: enough for the pool's largest team
/// (64 threads) to share, few enough that a tile still holds 1 K points.
constexpr int64_t kTiles = 64;
/// Tile sizes are multiples of the register tiles of
/// pdg-register-tile-contractions, so that a tile's edge cuts none: 4 rows,
/// and along the output's last dim up to 8 vectors of 8 lanes.
constexpr int64_t kRowsAlign = 4;
constexpr int64_t kColumnsAlign = 64;

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

/// The elements of a shaped operand, dynamic dims counted as kDynamicGuess
/// (saturating, as work()).
int64_t elements(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  int64_t total = 1;
  for (int64_t extent : type ? type.getShape() : ArrayRef<int64_t>{}) {
    int64_t e = ShapedType::isDynamic(extent) ? kDynamicGuess : extent;
    total = total > (int64_t(1) << 40) / std::max<int64_t>(e, 1) ? int64_t(1) << 40 : total * e;
  }
  return total;
}

/// The loop to split: the first parallel loop whose extent may exceed 1
/// among those that index the op's largest input (the first of equals),
/// else the first of all. Each tile then reads its own part of that input:
/// a product of a few rows (a batch of tokens) by a large weight matrix is
/// cut along the weights' columns, not along its rows, which would have
/// every thread read all of the weights.
std::optional<unsigned> splitLoop(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto splittable = [&](unsigned i) {
    return linalg::isParallelIterator(op.getIteratorTypesArray()[i]) &&
           (ShapedType::isDynamic(ranges[i]) || ranges[i] > 1);
  };
  OpOperand *largest = nullptr;
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<ShapedType>(input->get().getType()) &&
        (!largest || elements(input->get()) > elements(largest->get())))
      largest = input;
  if (largest) {
    AffineMap map = op.getMatchingIndexingMap(largest);
    for (unsigned i = 0; i < op.getNumLoops(); ++i)
      if (splittable(i) && map.isFunctionOfDim(i))
        return i;
  }
  for (unsigned i = 0; i < op.getNumLoops(); ++i)
    if (splittable(i))
      return i;
  return std::nullopt;
}

/// What the tile size along loop `dim` is a multiple of: the columns of a
/// register tile when `dim` is the output's last dim, else its rows.
int64_t alignment(linalg::LinalgOp op, unsigned dim) {
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() > 0) {
    auto last = dyn_cast<AffineDimExpr>(out.getResults().back());
    if (last && last.getPosition() == dim)
      return kColumnsAlign;
  }
  return kRowsAlign;
}

/// The tile size along a loop of `extent` points cut into at most `tiles`:
/// ceil(extent / tiles) rounded up to a multiple of `align`, so at least
/// `align` (never 0, which tiling reads as "not tiled").
int64_t tileSize(int64_t extent, int64_t align, int64_t tiles) {
  return llvm::alignTo(llvm::divideCeil(std::max<int64_t>(extent, 1), tiles), align);
}

/// tileSize() of a dynamic extent, computed where the op runs.
Value tileSize(OpBuilder &b, Location loc, Value extent, int64_t align, int64_t count) {
  Value tiles = arith::ConstantIndexOp::create(b, loc, count);
  Value step = arith::ConstantIndexOp::create(b, loc, align);
  Value each = arith::CeilDivUIOp::create(b, loc, extent, tiles);
  Value size = arith::MulIOp::create(b, loc, arith::CeilDivUIOp::create(b, loc, each, step), step);
  return arith::MaxUIOp::create(b, loc, size, step);
}

/// True if `op` is inside an scf.parallel of its own function: it runs on
/// many threads already, and splitting it again would only add the cost of
/// a team of one per call.
bool inParallelLoop(linalg::LinalgOp op) { return op->getParentOfType<scf::ParallelOp>(); }

/// True if `op` is in a function the driver calls inside one of its
/// parallel loops (marked `pdg.in_parallel_loop`). Where that loop has
/// fewer points than the pool has threads (one sequence's decode step), it
/// runs on the caller alone (pdg-conditional-forks) and the function's own
/// tiles fork; else they run as a team of one.
bool calledInDriverLoop(linalg::LinalgOp op) {
  auto fn = op->getParentOfType<FunctionOpInterface>();
  return fn && fn->hasAttr(kInParallelLoop);
}

struct ParallelizeLargeOps
    : mlir::pdg::impl::PdgParallelizeLargeOpsBase<ParallelizeLargeOps> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 || op.getNumDpsInits() == 0 ||
          inParallelLoop(op) || !splitLoop(op))
        return;
      int64_t least = calledInDriverLoop(op) ? minWorkInLoop : minWork;
      if (least >= 0 && work(op) >= least)
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      unsigned dim = *splitLoop(op);
      int64_t align = alignment(op, dim);
      int64_t extent = op.getStaticLoopRanges()[dim];
      // In a body of the driver's loop the tiles split one sequence's
      // product; fewer, wider tiles keep the weights' rows long runs of
      // memory (a matrix-vector product streams them once).
      int64_t tiles = calledInDriverLoop(op) ? std::max<int64_t>(tilesInLoop, 1) : kTiles;
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      // Tile sizes: 0 (not tiled) but along `dim`.
      linalg::LinalgTilingOptions options;
      options.setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
      if (ShapedType::isDynamic(extent)) {
        SmallVector<Range> loopRanges = op.createLoopRanges(rewriter, loc);
        Value n = getValueOrCreateConstantIndexOp(rewriter, loc, loopRanges[dim].size);
        SmallVector<Value, 4> sizes(op.getNumLoops(),
                                    arith::ConstantIndexOp::create(rewriter, loc, 0));
        sizes[dim] = tileSize(rewriter, loc, n, align, tiles);
        options.setTileSizes(sizes);
      } else if (extent > tileSize(extent, align, tiles)) {
        SmallVector<int64_t> sizes(op.getNumLoops(), 0);
        sizes[dim] = tileSize(extent, align, tiles);
        options.setTileSizes(sizes);
      } else {
        continue; // one tile: stays whole
      }
      FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled))
        continue; // stays whole, on one thread
      rewriter.eraseOp(op);
      ++numSplit;
    }
  }
};

} // namespace
