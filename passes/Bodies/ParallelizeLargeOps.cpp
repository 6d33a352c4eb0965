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
// A product of a few rows (decode at batch 1 in a body of the driver's
// loop, or a small batch vectorized) that reads its weights B[k, n] along
// their rows is cut along k, the summed loop, instead: cut along n, each
// tile would read every row of B in a run as short as its width (768
// bytes of a bf16 row at 8 tiles of 3072 columns), which the prefetchers
// follow poorly; along k, a tile reads whole rows, one block of memory.
// Each tile sums into a partial output of its own, and the partials are
// added to the output after, in tile order (so the results depend on the
// extents alone here too). With more rows the partials grow (a check at
// run time where the rows are dynamic) and the cut is along n.
//
// A fill of the op's output right before it (a product's zeros) is cut
// with it: each tile fills its own part of the output, in parallel and
// just before it computes there (pdg-call-blas then drops a fill of zeros
// for sgemm's beta = 0). Cut along the summed loop, the fill stays whole.
//
//===----------------------------------------------------------------------===//

#include "FillBefore.h"
#include "MultiplyAdd.h"
#include "Passes.h"
#include "RuntimeFunctions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
/// The runtime's answer, in a body of the driver's loop, to whether that
/// loop's bodies run their large ops as tiles (runtime/lib/threads.c).
constexpr StringLiteral kOpsSplit = "pdg_ops_split";
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
/// A product is cut along its summed loop only where its partial outputs
/// (one per tile: zeroed, written and read once, in the caches) hold at
/// most 1/kPartialsShare of its weights' elements (read once from memory).
constexpr int64_t kPartialsShare = 8;
/// The most tiles a product is cut into along its summed loop outside the
/// driver's loop (each adds a partial output).
constexpr int64_t kSummedTiles = 8;

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

/// How a product C[m.., n..] += A[m.., k..] * B[k.., n..] reads its
/// weights (B, the larger input) along their rows: `k` is B's first dim
/// (summed) and B's last dim is the output's. Then cutting n gives short
/// runs of B and cutting k whole rows.
struct RowsOfWeights {
  unsigned a, b; // input operand numbers: the activations, the weights
  unsigned k;    // the summed loop to cut
};

std::optional<RowsOfWeights> rowsOfWeights(linalg::LinalgOp linalgOp) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !pdg::isMultiplyAdd(op))
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  auto out = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!out.getElementType().isF32() || out.getRank() == 0)
    return std::nullopt;
  RowsOfWeights r{0, 1, 0};
  if (elements(op.getDpsInputOperand(0)->get()) > elements(op.getDpsInputOperand(1)->get()))
    std::swap(r.a, r.b);
  auto iterators = op.getIteratorTypesArray();
  AffineMap mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(r.b));
  AffineMap mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (mapB.getNumResults() < 2 || mapC.getNumResults() == 0)
    return std::nullopt;
  r.k = mapB.getDimPosition(0);
  unsigned n = mapB.getDimPosition(mapB.getNumResults() - 1);
  if (!linalg::isReductionIterator(iterators[r.k]) ||
      mapC.getDimPosition(mapC.getNumResults() - 1) != n)
    return std::nullopt;
  if (ShapedType::isDynamic(op.getStaticLoopRanges()[r.k]))
    return std::nullopt;
  return r;
}

/// Cuts the product `op` (see rowsOfWeights) along its summed loop into
/// tiles of `size` rows of B: tile t sums into partials[t] (zeroed first),
/// then C += partials[0] + partials[1] + ..., in that order. Only where the
/// partials hold at most 1/kPartialsShare of B's elements: false (nothing
/// changed) where that fails on sizes known here, or one tile holds every
/// row. Where C's size is known only at run time (rows of tokens), the cut
/// is guarded there, and `fallback` is set to a copy of `op` that runs
/// otherwise (for the caller to cut along n).
bool splitSummedLoop(IRRewriter &b, linalg::GenericOp op, const RowsOfWeights &r,
                     int64_t tiles, linalg::GenericOp &fallback) {
  int64_t extent = op.getStaticLoopRanges()[r.k];
  int64_t size = tileSize(extent, kRowsAlign, tiles);
  int64_t count = llvm::divideCeil(extent, size);
  Value outC = op.getDpsInitOperand(0)->get();
  auto outType = cast<MemRefType>(outC.getType());
  auto weightsType = cast<MemRefType>(op.getDpsInputOperand(r.b)->get().getType());
  if (count <= 1 || !weightsType.hasStaticShape())
    return false;
  int64_t budget = weightsType.getNumElements() / kPartialsShare;
  if (outType.hasStaticShape() && outType.getNumElements() * count > budget)
    return false;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  if (!outType.hasStaticShape()) {
    Value partialElements = arith::ConstantIndexOp::create(b, loc, count);
    for (int64_t d = 0; d < outType.getRank(); ++d)
      partialElements = arith::MulIOp::create(
          b, loc, partialElements,
          getValueOrCreateConstantIndexOp(b, loc, memref::getMixedSize(b, loc, outC, d)));
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, partialElements,
                                       arith::ConstantIndexOp::create(b, loc, budget));
    auto guard = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/true);
    b.setInsertionPointToStart(&guard.getElseRegion().front());
    fallback = cast<linalg::GenericOp>(b.clone(*op));
    b.setInsertionPointToStart(&guard.getThenRegion().front());
  }
  SmallVector<int64_t> shape = {count};
  llvm::append_range(shape, outType.getShape());
  auto partialsType = MemRefType::get(shape, outType.getElementType());
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < outType.getRank(); ++d)
    if (outType.isDynamicDim(d))
      dynamicSizes.push_back(memref::DimOp::create(b, loc, outC, d));
  Value partials = memref::AllocOp::create(b, loc, partialsType, dynamicSizes,
                                           b.getI64IntegerAttr(64))
                       .getResult();
  Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  linalg::FillOp::create(b, loc, ValueRange{zeroF}, ValueRange{partials});

  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value tileRows = arith::ConstantIndexOp::create(b, loc, size);
  Value rows = arith::ConstantIndexOp::create(b, loc, extent);
  auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                      ValueRange{arith::ConstantIndexOp::create(b, loc, count)},
                                      ValueRange{one});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVars()[0];
    Value k0 = arith::MulIOp::create(b, loc, t, tileRows);
    Value rowsHere = arith::MinUIOp::create(b, loc, tileRows,
                                            arith::SubIOp::create(b, loc, rows, k0));
    // The inputs' rows [k0, k0 + rowsHere).
    IRMapping mapping;
    for (unsigned i : {r.a, r.b}) {
      OpOperand *operand = op.getDpsInputOperand(i);
      AffineMap map = op.getMatchingIndexingMap(operand);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (unsigned res = 0; res < map.getNumResults(); ++res) {
        bool cut = map.getDimPosition(res) == r.k;
        offsets.push_back(cut ? OpFoldResult(k0) : b.getIndexAttr(0));
        sizes.push_back(cut ? OpFoldResult(rowsHere)
                            : memref::getMixedSize(b, loc, operand->get(), res));
        strides.push_back(b.getIndexAttr(1));
      }
      mapping.map(operand->get(),
                  memref::SubViewOp::create(b, loc, operand->get(), offsets, sizes, strides));
    }
    // The output: partials[t], rank-reduced to C's shape.
    SmallVector<OpFoldResult> offsets = {t}, sizes = {b.getIndexAttr(1)},
                              strides(shape.size(), b.getIndexAttr(1));
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(memref::getMixedSize(b, loc, outC, d));
    }
    auto partType = memref::SubViewOp::inferRankReducedResultType(
        outType.getShape(), partialsType, offsets, sizes, strides);
    mapping.map(outC, memref::SubViewOp::create(b, loc, cast<MemRefType>(partType), partials,
                                                offsets, sizes, strides));
    b.clone(*op, mapping);
  }
  // C += the partials, in tile order (the tile loop outermost).
  MLIRContext *ctx = b.getContext();
  unsigned rank = outType.getRank();
  AffineMap all = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
  AffineMap dropTile = AffineMap::get(rank + 1, 0, all.getResults().drop_front(), ctx);
  SmallVector<utils::IteratorType> iterators(rank + 1, utils::IteratorType::parallel);
  iterators[0] = utils::IteratorType::reduction;
  linalg::GenericOp::create(
      b, loc, ValueRange{partials}, ValueRange{outC}, ArrayRef<AffineMap>{all, dropTile},
      iterators, [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value sum = arith::AddFOp::create(nb, nloc, args[1], args[0]);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  memref::DeallocOp::create(b, loc, partials);
  b.eraseOp(op);
  return true;
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
    // A fill that an op to be cut takes into its tiles is not cut apart.
    llvm::SmallPtrSet<Operation *, 8> taken;
    for (linalg::LinalgOp op : ops)
      if (linalg::FillOp fill = pdg::fillBefore(op))
        taken.insert(fill);
    llvm::erase_if(ops, [&](linalg::LinalgOp op) { return taken.contains(op); });
    IRRewriter rewriter(&getContext());
    func::FuncOp opsSplit;
    if (llvm::any_of(ops, calledInDriverLoop)) {
      opsSplit = pdg::runtimeFunction(module, kOpsSplit,
                                      rewriter.getFunctionType({}, {rewriter.getI32Type()}));
      if (!opsSplit)
        return signalPassFailure();
    }
    for (linalg::LinalgOp op : ops) {
      // A product that calls sgemm: its tiles along n, with no partial
      // outputs to zero and add (sgemm reads B well in either direction).
      bool blas = callsBlas(op);
      auto cut = [&](int64_t tiles) {
        return blas ? splitColumns(rewriter, op, blasTiles) : split(rewriter, op, tiles);
      };
      if (!calledInDriverLoop(op)) {
        cut(kTiles);
        continue;
      }
      // In a body of the driver's loop the tiles split one sequence's
      // product; fewer, wider tiles keep the weights' rows long runs of
      // memory (a matrix-vector product streams them once). They run only
      // where the loop has too few points to share out the threads
      // (pdg_ops_split, a function of the points alone); else the op runs
      // whole, as it was.
      scf::IfOp choice = splitOrWhole(rewriter, op, opsSplit);
      if (cut(std::max<int64_t>(tilesInLoop, 1)))
        continue;
      unwrap(rewriter, choice, op); // one tile: no choice to make
    }
  }

  /// True if pdg-call-blas, run after this pass with the same thresholds,
  /// turns the `blas-tiles` tiles of `op` into sgemm calls: a product of
  /// f32 buffers whose tile's rows and columns (known here) reach
  /// `blas-min-dim` and whose multiply-adds per batch point reach
  /// `blas-min-flops` (a summed extent known only at run time counts as
  /// kDynamicGuess: a weight's gradient over the steps). Rows known only
  /// at run time may be a few (decode at a small batch), and tiles below
  /// the thresholds run pdg's kernels: both keep the tiles of any op.
  bool callsBlas(linalg::LinalgOp op) const {
    if (blasTiles <= 0 || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
      return false;
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (generic ? !pdg::isMultiplyAdd(generic) : !isa<linalg::ContractionOpInterface>(*op))
      return false;
    for (Value v : op->getOperands()) {
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type || !type.getElementType().isF32())
        return false;
    }
    std::optional<unsigned> cut = splitLoop(op);
    if (!cut)
      return false;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    // The sizes of one tile (the largest), which each call must reach.
    int64_t m = 1, n = 1, k = 1;
    for (unsigned d = 0; d < op.getNumLoops(); ++d) {
      bool inA = maps[0].isFunctionOfDim(d), inB = maps[1].isFunctionOfDim(d);
      bool summed = !maps[2].isFunctionOfDim(d);
      if (ShapedType::isDynamic(ranges[d]) && !summed)
        return false;
      int64_t extent = ShapedType::isDynamic(ranges[d]) ? kDynamicGuess : ranges[d];
      if (d == *cut)
        extent = std::min(extent, tileSize(extent, alignment(op, d), blasTiles));
      if (summed)
        k *= extent;
      else if (inA && !inB)
        m *= extent;
      else if (inB && !inA)
        n *= extent;
    }
    return m >= blasMinDim && n >= blasMinDim && m * n * k >= blasMinFlops;
  }

  /// Splits `op` into at most `tiles` tiles: along its summed loop where it
  /// reads its weights along their rows, else along splitLoop(op). False if
  /// it stays whole.
  bool split(IRRewriter &rewriter, linalg::LinalgOp op, int64_t tiles) {
    if (auto rows = rowsOfWeights(op)) {
      linalg::GenericOp fallback;
      int64_t summedTiles = std::min(tiles, kSummedTiles);
      if (splitSummedLoop(rewriter, cast<linalg::GenericOp>(op.getOperation()), *rows,
                          summedTiles, fallback)) {
        ++numSplit;
        if (fallback)
          splitColumns(rewriter, fallback, tiles);
        return true;
      }
    }
    return splitColumns(rewriter, op, tiles);
  }

  /// Puts `op` in the then-block of `scf.if (pdg_ops_split() != 0)` (the
  /// call of `opsSplit`), and a copy of it in the else-block; its fill
  /// (fillBefore) goes with it into both.
  scf::IfOp splitOrWhole(IRRewriter &rewriter, linalg::LinalgOp op, func::FuncOp opsSplit) {
    Location loc = op.getLoc();
    linalg::FillOp fill = pdg::fillBefore(op);
    rewriter.setInsertionPoint(op);
    Value flag = func::CallOp::create(rewriter, loc, opsSplit).getResult(0);
    Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
    Value tiles = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, flag, zero);
    auto choice = scf::IfOp::create(rewriter, loc, TypeRange{}, tiles, /*withElseRegion=*/true);
    rewriter.moveOpBefore(op, choice.thenBlock()->getTerminator());
    rewriter.setInsertionPoint(choice.elseBlock()->getTerminator());
    if (fill) {
      rewriter.clone(*fill);
      rewriter.moveOpBefore(fill, op);
    }
    rewriter.clone(*op);
    return choice;
  }

  /// Undoes splitOrWhole: `op` (and its fill) back before `choice`, which
  /// goes.
  void unwrap(IRRewriter &rewriter, scf::IfOp choice, linalg::LinalgOp op) {
    Operation *flag = choice.getCondition().getDefiningOp();
    if (linalg::FillOp fill = pdg::fillBefore(op))
      rewriter.moveOpBefore(fill, choice);
    rewriter.moveOpBefore(op, choice);
    rewriter.eraseOp(choice);
    Operation *call = flag->getOperand(0).getDefiningOp();
    Operation *zero = flag->getOperand(1).getDefiningOp();
    rewriter.eraseOp(flag);
    rewriter.eraseOp(call);
    rewriter.eraseOp(zero);
  }

  /// Tiles `op` along splitLoop(op) into at most `tiles` tiles, each
  /// filling its part of the output first where a fill came before `op`;
  /// false if it stays whole.
  bool splitColumns(IRRewriter &rewriter, linalg::LinalgOp op, int64_t tiles) {
    unsigned dim = *splitLoop(op);
    // The tiles cut a parallel loop that indexes the output: each element is
    // a tile's, and the tiles' fills together fill all of it.
    linalg::FillOp fill = pdg::fillBefore(op);
    if (fill && !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isFunctionOfDim(dim))
      fill = nullptr;
    int64_t align = alignment(op, dim);
    int64_t extent = op.getStaticLoopRanges()[dim];
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
      return false; // one tile: stays whole
    }
    FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(rewriter, op, options);
    if (failed(tiled))
      return false; // stays whole, on one thread
    if (fill) {
      rewriter.setInsertionPoint(tiled->op);
      linalg::FillOp::create(rewriter, fill.getLoc(), fill.getDpsInputs(),
                             ValueRange{tiled->op.getDpsInitOperand(0)->get()});
      rewriter.eraseOp(fill);
    }
    rewriter.eraseOp(op);
    ++numSplit;
    return true;
  }
};

} // namespace
