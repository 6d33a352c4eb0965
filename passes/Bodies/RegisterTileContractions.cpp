//===- RegisterTileContractions.cpp - pdg-register-tile-contractions ------===//
//
// A contraction C[.., m, n] += A[.., m, .., k, ..] * B[.., k, .., n] on
// buffers, lowered by convert-linalg-to-loops, loads and stores C at every
// step of k: LLVM cannot keep the row in registers when it cannot prove
// that C aliases neither A nor B (views of stores passed through calls, or
// through the thread pool's packed arguments). Here the full tiles of
// (m, n) run a micro-kernel whose accumulators are SSA vectors, carried
// through the reduction loops: C is read once and written once per tile,
// and each step is one broadcast of A and a fused multiply-add per vector
// of B. Rows and columns left over, and operands whose last dim is not
// contiguous at run time, run the op as it was. A bf16 input (a weight
// stored in half the bytes) is widened to f32 as it is loaded: products
// and sums stay f32.
//
//===----------------------------------------------------------------------===//

#include "MultiplyAdd.h"
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGREGISTERTILECONTRACTIONS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using mlir::pdg::isMultiplyAdd;

namespace {

/// Lanes of one vector: 8 floats fill an AVX2 register.
constexpr int64_t kLanes = 8;
/// Rows of B a streamed matrix-vector product reads per pass over C.
constexpr int64_t kStreamRows = 4;
/// A product of at most this many rows (of A and C) by a large B streams B
/// too (see emitStreaming): each row's pass reads B's rows from the cache.
constexpr int64_t kStreamMaxRows = 8;
/// Columns of B such a product runs all its rows over at a time: 4 rows
/// of B x 512 columns (8 KiB of f32) stay in the L1 cache between rows.
constexpr int64_t kStreamBlock = 512;
/// A dot-form product whose A (its rows of f32) takes at most this many
/// bytes runs its tiles of rows inside its tiles of columns (see
/// rewriteDot): half of a 2 MiB L2 cache.
constexpr int64_t kDotRowsInsideBytes = 1 << 20;

/// How a linalg.generic is a contraction. Loop numbers are the op's.
struct Contraction {
  unsigned n;                          // output's last dim, last in B
  std::optional<unsigned> m;           // output's second-last dim, in A only
  SmallVector<unsigned> outer;         // other parallel loops
  SmallVector<unsigned> reductions;    // summed loops
  unsigned a, b;                       // input operand numbers
};

bool uses(AffineMap map, unsigned dim) { return map.isFunctionOfDim(dim); }

/// Whether `op` is a product both kernels may take: C += A * B on buffers,
/// in f32 (an input may be bf16, a weight widened as it is read), each
/// operand read through a projected permutation.
bool isF32Product(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  // The kernels read C once per tile: an output that is also an input
  // would see its updates at every step in the loops, not in the kernel.
  Value out = op.getDpsInitOperand(0)->get();
  if (out == op.getDpsInputOperand(0)->get() || out == op.getDpsInputOperand(1)->get())
    return false;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !(t.getElementType().isF32() || (v != out && t.getElementType().isBF16())))
      return false;
  }
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return false;
  return isMultiplyAdd(op);
}

std::optional<Contraction> match(linalg::GenericOp op) {
  if (!isF32Product(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps[2];
  if (outMap.getNumResults() == 0)
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  Contraction c;
  c.n = outMap.getDimPosition(outMap.getNumResults() - 1);
  if (!linalg::isParallelIterator(iterators[c.n]))
    return std::nullopt;
  // B: the input with n as its last dim; A must not read along n.
  bool foundB = false;
  for (unsigned i : {0u, 1u}) {
    AffineMap map = maps[i];
    if (map.getNumResults() > 0 && map.getDimPosition(map.getNumResults() - 1) == c.n &&
        !uses(maps[1 - i], c.n)) {
      c.b = i;
      c.a = 1 - i;
      foundB = true;
    }
  }
  if (!foundB)
    return std::nullopt;
  if (outMap.getNumResults() >= 2) {
    unsigned m = outMap.getDimPosition(outMap.getNumResults() - 2);
    if (uses(maps[c.a], m) && !uses(maps[c.b], m))
      c.m = m;
  }
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    if (d == c.n || (c.m && d == *c.m))
      continue;
    if (linalg::isReductionIterator(iterators[d]))
      c.reductions.push_back(d);
    else
      c.outer.push_back(d);
  }
  if (c.reductions.empty())
    return std::nullopt;
  return c;
}

/// A contraction in dot form: C[.., m, n] += A[.., m, k] * B[.., n, k], the
/// one summed loop k last in both inputs (a tied head's logits, h @ E^T,
/// read straight from the table E without transposing it). n is C's last
/// dim, read by B and not A; m, when C has one, is read by A and not B.
struct DotContraction {
  unsigned n, k;                       // C's last dim; the summed loop
  std::optional<unsigned> m;           // C's second-last dim, in A only
  SmallVector<unsigned> outer;         // other parallel loops
  unsigned a, b;                       // input operand numbers
};

std::optional<DotContraction> matchDot(linalg::GenericOp op) {
  if (!isF32Product(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (map.getNumResults() == 0)
      return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> reductions;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (linalg::isReductionIterator(iterators[d]))
      reductions.push_back(d);
  if (reductions.size() != 1)
    return std::nullopt;
  auto lastOf = [](AffineMap map) { return map.getDimPosition(map.getNumResults() - 1); };
  DotContraction c;
  c.k = reductions[0];
  c.n = lastOf(maps[2]);
  if (lastOf(maps[0]) != c.k || lastOf(maps[1]) != c.k)
    return std::nullopt;
  bool foundB = false;
  for (unsigned i : {0u, 1u})
    if (uses(maps[i], c.n) && !uses(maps[1 - i], c.n)) {
      c.b = i;
      c.a = 1 - i;
      foundB = true;
    }
  if (!foundB)
    return std::nullopt;
  if (maps[2].getNumResults() >= 2) {
    unsigned m = maps[2].getDimPosition(maps[2].getNumResults() - 2);
    if (uses(maps[c.a], m) && !uses(maps[c.b], m))
      c.m = m;
  }
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != c.n && d != c.k && !(c.m && d == *c.m))
      c.outer.push_back(d);
  return c;
}

/// The indices of `operand` (through its indexing map) at loop values `at`.
SmallVector<Value> indicesAt(AffineMap map, ArrayRef<Value> at) {
  SmallVector<Value> indices;
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    indices.push_back(at[map.getDimPosition(r)]);
  return indices;
}

/// A vector of kLanes f32 from `view` at `indices`: loaded as it is, or
/// loaded as bf16 and widened.
Value loadF32Vector(OpBuilder &b, Location loc, Value view, ValueRange indices) {
  Type elem = cast<MemRefType>(view.getType()).getElementType();
  auto f32 = VectorType::get({kLanes}, b.getF32Type());
  if (elem.isF32())
    return vector::LoadOp::create(b, loc, f32, view, indices);
  Value narrow = vector::LoadOp::create(b, loc, VectorType::get({kLanes}, elem), view, indices);
  return arith::ExtFOp::create(b, loc, f32, narrow);
}

/// One element of `source` at `indices` as f32 (widened if bf16).
Value loadF32(OpBuilder &b, Location loc, Value source, ValueRange indices) {
  Value v = memref::LoadOp::create(b, loc, source, indices);
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

/// An operand whose last stride must be 1 for vector.load and vector.store:
/// its strided metadata (read once), whether the stride is 1 (a constant
/// true when the type says so), and, in the branch where it is, the view
/// with that unit stride in its type.
struct Contiguous {
  memref::ExtractStridedMetadataOp meta;
  Value isUnit;

  Contiguous(OpBuilder &b, Location loc, Value source) {
    meta = memref::ExtractStridedMetadataOp::create(b, loc, source);
    auto type = cast<MemRefType>(source.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1) {
      isUnit = arith::ConstantIntOp::create(b, loc, 1, 1);
      return;
    }
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    isUnit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, meta.getStrides().back(), one);
  }

  Value view(OpBuilder &b, Location loc) {
    auto type = cast<MemRefType>(meta.getSource().getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t i = 0; i < rank; ++i) {
      sizes.push_back(meta.getSizes()[i]);
      strides.push_back(i + 1 == rank ? OpFoldResult(b.getIndexAttr(1))
                                      : OpFoldResult(meta.getStrides()[i]));
    }
    SmallVector<int64_t> layout(rank, ShapedType::kDynamic);
    layout.back() = 1;
    auto resultType = MemRefType::get(
        SmallVector<int64_t>(rank, ShapedType::kDynamic), type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, layout),
        type.getMemorySpace());
    return memref::ReinterpretCastOp::create(b, loc, resultType, meta.getBaseBuffer(),
                                             meta.getOffset(), sizes, strides);
  }
};

/// Loops from 0 to the size of each of `dims`, nested in that order, each
/// setting at[d] to its index; `body` is emitted in the innermost one (or
/// where `b` inserts, without dims). `b` inserts after the nest again.
void nestLoops(OpBuilder &b, Location loc, ArrayRef<unsigned> dims,
               function_ref<Value(unsigned)> size, SmallVector<Value> &at,
               function_ref<void()> body) {
  OpBuilder::InsertionGuard guard(b);
  for (unsigned d : dims) {
    auto loop = scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0), size(d),
                                   arith::ConstantIndexOp::create(b, loc, 1));
    b.setInsertionPointToStart(loop.getBody());
    at[d] = loop.getInductionVar();
  }
  body();
}

/// A copy of `op` over the sub-ranges (loop, (offset, size)) of `parts`:
/// its operands are the matching subviews.
void runPart(OpBuilder &b, linalg::GenericOp op,
             ArrayRef<std::pair<unsigned, std::pair<Value, Value>>> parts) {
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      unsigned dim = map.getDimPosition(r);
      OpFoldResult offset = b.getIndexAttr(0), size = memref::getMixedSize(b, loc, operand.get(), r);
      for (auto &[d, range] : parts)
        if (d == dim) {
          offset = range.first;
          size = range.second;
        }
      offsets.push_back(offset);
      sizes.push_back(size);
      strides.push_back(b.getIndexAttr(1));
    }
    operands.push_back(memref::SubViewOp::create(b, loc, operand.get(), offsets, sizes, strides));
  }
  IRMapping mapping;
  for (auto [old, now] : llvm::zip(op->getOperands(), operands))
    mapping.map(old, now);
  b.clone(*op, mapping);
}

struct RegisterTileContractions
    : mlir::pdg::impl::PdgRegisterTileContractionsBase<RegisterTileContractions> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Contraction>> found;
    SmallVector<std::pair<linalg::GenericOp, DotContraction>> dots;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (auto c = match(op))
        found.push_back({op, *c});
      else if (auto d = matchDot(op))
        dots.push_back({op, *d});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, c] : found) {
      rewrite(rewriter, op, c);
      ++numTiled;
    }
    for (auto &[op, c] : dots) {
      rewriteDot(rewriter, op, c);
      ++numDots;
    }
  }

  /// C[.., m, n] += sum over k of A[.., m, k] * B[.., n, k], where A's and
  /// B's last strides are 1 at run time (else the op as it was): tiles of
  /// `rows` x `cols` outputs each carry one vector accumulator along k,
  /// which a pass over k fills 8 lanes at a time from rows of A and of B
  /// read end to end, and which is then summed across its lanes (and the
  /// last k % 8 products one by one) and added to C. Tiles of 4 x 2 where
  /// C has rows, 1 x 4 where it has none (a matrix-vector product, e.g.
  /// a decode step's logits against the embedding table: 4 rows of the
  /// table streamed at once); the rows and columns the tiles leave take
  /// tiles of 1 x 1.
  void rewriteDot(IRRewriter &b, linalg::GenericOp op, const DotContraction &c) {
    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    SmallVector<Range> loops = cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    auto size = [&](unsigned d) { return getValueOrCreateConstantIndexOp(b, loc, loops[d].size); };
    auto index = [&](int64_t i) { return arith::ConstantIndexOp::create(b, loc, i).getResult(); };
    Value zero = index(0), one = index(1);
    Value inA = op.getDpsInputOperand(c.a)->get(), inB = op.getDpsInputOperand(c.b)->get();
    Value outC = op.getDpsInitOperand(0)->get();
    Contiguous contiguousA(b, loc, inA), contiguousB(b, loc, inB);
    Value contiguous = arith::AndIOp::create(b, loc, contiguousA.isUnit, contiguousB.isUnit);
    auto branch = scf::IfOp::create(b, loc, contiguous, /*withElseRegion=*/true);
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    b.clone(*op);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    Value viewA = contiguousA.view(b, loc), viewB = contiguousB.view(b, loc);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap mapA = maps[c.a], mapB = maps[c.b], mapC = maps[2];
    auto vecType = VectorType::get({kLanes}, b.getF32Type());
    Value n = size(c.n), m = c.m ? size(*c.m) : one, k = size(c.k);
    auto floorTo = [&](Value v, int64_t step) {
      return arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, v, index(step)),
                                   index(step))
          .getResult();
    };
    Value kMain = floorTo(k, kLanes);
    int64_t rows = c.m ? 4 : 1, cols = c.m ? 2 : 4;
    Value mMain = floorTo(m, rows), nMain = floorTo(n, cols);

    SmallVector<Value> at(op.getNumLoops(), zero);
    // One tile at rows [m0, m0 + tileRows) and columns [n0, n0 + tileCols).
    auto tile = [&](Value m0, Value n0, int64_t tileRows, int64_t tileCols) {
      auto plus = [&](Value v, int64_t i) {
        return i == 0 ? v : arith::AddIOp::create(b, loc, v, index(i)).getResult();
      };
      Value zeros = arith::ConstantOp::create(b, loc, vecType,
                                              DenseElementsAttr::get(vecType, 0.0f));
      SmallVector<Value> init(tileRows * tileCols, zeros);
      auto kLoop = scf::ForOp::create(b, loc, zero, kMain, index(kLanes), init);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(kLoop.getBody());
        at[c.k] = kLoop.getInductionVar();
        SmallVector<Value> av, bv, next;
        for (int64_t i = 0; i < tileRows; ++i) {
          if (c.m)
            at[*c.m] = plus(m0, i);
          av.push_back(loadF32Vector(b, loc, viewA, indicesAt(mapA, at)));
        }
        for (int64_t j = 0; j < tileCols; ++j) {
          at[c.n] = plus(n0, j);
          bv.push_back(loadF32Vector(b, loc, viewB, indicesAt(mapB, at)));
        }
        for (int64_t i = 0; i < tileRows; ++i)
          for (int64_t j = 0; j < tileCols; ++j)
            next.push_back(vector::FMAOp::create(b, loc, av[i], bv[j],
                                                 kLoop.getRegionIterArgs()[i * tileCols + j]));
        scf::YieldOp::create(b, loc, next);
      }
      // Each accumulator's lanes summed, then the products past kMain.
      SmallVector<Value> sums;
      for (Value acc : kLoop.getResults())
        sums.push_back(vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, acc));
      auto rest = scf::ForOp::create(b, loc, kMain, k, one, sums);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(rest.getBody());
        at[c.k] = rest.getInductionVar();
        SmallVector<Value> next;
        for (int64_t i = 0; i < tileRows; ++i) {
          if (c.m)
            at[*c.m] = plus(m0, i);
          Value a = loadF32(b, loc, viewA, indicesAt(mapA, at));
          for (int64_t j = 0; j < tileCols; ++j) {
            at[c.n] = plus(n0, j);
            Value x = loadF32(b, loc, viewB, indicesAt(mapB, at));
            next.push_back(
                math::FmaOp::create(b, loc, a, x, rest.getRegionIterArgs()[i * tileCols + j]));
          }
        }
        scf::YieldOp::create(b, loc, next);
      }
      for (int64_t i = 0; i < tileRows; ++i)
        for (int64_t j = 0; j < tileCols; ++j) {
          if (c.m)
            at[*c.m] = plus(m0, i);
          at[c.n] = plus(n0, j);
          SmallVector<Value> where = indicesAt(mapC, at);
          Value before = memref::LoadOp::create(b, loc, outC, where);
          Value after =
              arith::AddFOp::create(b, loc, before, rest.getResult(i * tileCols + j));
          memref::StoreOp::create(b, loc, after, outC, where);
        }
    };
    // Tiles of tileRows x tileCols over rows [mLo, mHi) and columns [nLo, nHi).
    // (No loop over rows where C has none.) With `rowsInner`, the loop over
    // C's rows runs inside the loop over its columns.
    auto tiles = [&](Value mLo, Value mHi, int64_t tileRows, Value nLo, Value nHi,
                     int64_t tileCols, bool rowsInner = false) {
      OpBuilder::InsertionGuard guard(b);
      Value m0 = zero, n0;
      auto rowLoop = [&] {
        if (!c.m)
          return;
        auto mLoop = scf::ForOp::create(b, loc, mLo, mHi, index(tileRows));
        b.setInsertionPointToStart(mLoop.getBody());
        m0 = mLoop.getInductionVar();
      };
      if (!rowsInner)
        rowLoop();
      auto nLoop = scf::ForOp::create(b, loc, nLo, nHi, index(tileCols));
      b.setInsertionPointToStart(nLoop.getBody());
      n0 = nLoop.getInductionVar();
      if (rowsInner)
        rowLoop();
      tile(m0, n0, tileRows, tileCols);
    };
    nestLoops(b, loc, c.outer, size, at, [&] {
      if (c.m) {
        // Rows outside, B (a table of n rows) is read once per tile of
        // rows: twice at 8 rows (decode at batch 8, vectorized). Where A is
        // small enough to stay in the L2 cache, the rows go inside
        // instead, and B is read once.
        Value aBytes = arith::MulIOp::create(
            b, loc, arith::MulIOp::create(b, loc, mMain, k), index(4));
        Value small = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, aBytes,
                                            index(kDotRowsInsideBytes));
        auto order = scf::IfOp::create(b, loc, small, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&order.getThenRegion().front());
          tiles(zero, mMain, rows, zero, nMain, cols, /*rowsInner=*/true);
          b.setInsertionPointToStart(&order.getElseRegion().front());
          tiles(zero, mMain, rows, zero, nMain, cols);
        }
      } else {
        tiles(zero, mMain, rows, zero, nMain, cols);
      }
      tiles(zero, mMain, 1, nMain, n, 1);
      if (c.m)
        tiles(mMain, m, 1, zero, n, 1);
    });
    b.eraseOp(op);
  }

  /// True if `op` may stream B (see emitStreaming): a matrix-vector
  /// product, or one whose rows are not known here to exceed
  /// kStreamMaxRows (the rows are checked again at run time), where B is
  /// larger than `streamMinBytes` or of a size unknown here.
  bool streams(linalg::GenericOp op, const Contraction &c) {
    if (c.m && !ShapedType::isDynamic(op.getStaticLoopRanges()[*c.m]) &&
        op.getStaticLoopRanges()[*c.m] > kStreamMaxRows)
      return false;
    auto type = cast<MemRefType>(op.getDpsInputOperand(c.b)->get().getType());
    if (!type.hasStaticShape())
      return true;
    int64_t bytes = type.getElementType().getIntOrFloatBitWidth() / 8;
    return type.getNumElements() * bytes >= streamMinBytes;
  }

  void rewrite(IRRewriter &b, linalg::GenericOp op, const Contraction &c) {
    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    // Rows x vectors per tile: 4 x 2 (8 accumulators, 2 loads of B, one
    // broadcast of A: 11 of 16 AVX2 registers); a product without rows (a
    // matrix-vector product) takes up to 8 vectors of one row.
    // A static row narrower than the tile takes fewer vectors (a 32-wide
    // matrix-vector product: 4), so that the kernel still covers it.
    // A large matrix-vector product streams B instead (rewriteStreaming):
    // one vector of columns at a time, so whole rows of B.
    // With rows, a product of at most kStreamMaxRows of them (known at run
    // time) streams B as well, over the same rows and columns as the tiles.
    bool streaming = streams(op, c);
    int64_t rows = c.m ? 4 : 1, vectors = c.m ? 2 : streaming ? 1 : 8;
    int64_t width = op.getStaticLoopRanges()[c.n];
    if (!ShapedType::isDynamic(width))
      vectors = std::clamp<int64_t>(width / kLanes, 1, vectors);
    int64_t cols = vectors * kLanes;
    SmallVector<Range> loops = cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    auto size = [&](unsigned d) { return getValueOrCreateConstantIndexOp(b, loc, loops[d].size); };
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value n = size(c.n);
    Value m = c.m ? size(*c.m) : one;
    auto floorTo = [&](Value v, int64_t k) {
      Value step = arith::ConstantIndexOp::create(b, loc, k);
      return arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, v, step), step)
          .getResult();
    };
    Value mMain = floorTo(m, rows), nMain = floorTo(n, cols);

    Value inA = op.getDpsInputOperand(c.a)->get(), inB = op.getDpsInputOperand(c.b)->get();
    Value outC = op.getDpsInitOperand(0)->get();
    Contiguous contiguousB(b, loc, inB), contiguousC(b, loc, outC);
    Value contiguous = arith::AndIOp::create(b, loc, contiguousB.isUnit, contiguousC.isUnit);
    auto branch = scf::IfOp::create(b, loc, contiguous, /*withElseRegion=*/true);
    // Not contiguous: the op as it was.
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    b.clone(*op);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    Value viewB = contiguousB.view(b, loc);
    Value viewC = contiguousC.view(b, loc);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap mapA = maps[c.a], mapB = maps[c.b], mapC = maps[2];
    auto vecType = VectorType::get({kLanes}, b.getF32Type());

    // Loops over the other parallel dims, then the tiles of (m, n).
    SmallVector<Value> at(op.getNumLoops(), zero);
    nestLoops(b, loc, c.outer, size, at, [&] {
      if (streaming && !c.m) {
        emitStreaming(b, loc, op, c, at, viewB, viewC, nMain, Value());
        return;
      }
      OpBuilder::InsertionGuard outer(b);
      if (streaming) {
        Value few = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, mMain,
                                          arith::ConstantIndexOp::create(b, loc, kStreamMaxRows));
        auto choice = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
        b.setInsertionPointToStart(&choice.getThenRegion().front());
        emitStreaming(b, loc, op, c, at, viewB, viewC, nMain, mMain);
        b.setInsertionPointToStart(&choice.getElseRegion().front());
      }
      auto mLoop = scf::ForOp::create(b, loc, zero, mMain,
                                      arith::ConstantIndexOp::create(b, loc, rows));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(mLoop.getBody());
      auto nLoop = scf::ForOp::create(b, loc, zero, nMain,
                                      arith::ConstantIndexOp::create(b, loc, cols));
      b.setInsertionPointToStart(nLoop.getBody());
      Value m0 = mLoop.getInductionVar(), n0 = nLoop.getInductionVar();
      auto rowAt = [&](int64_t i) {
        return arith::AddIOp::create(b, loc, m0, arith::ConstantIndexOp::create(b, loc, i))
            .getResult();
      };
      auto colAt = [&](int64_t j) {
        return arith::AddIOp::create(b, loc, n0,
                                     arith::ConstantIndexOp::create(b, loc, j * kLanes))
            .getResult();
      };
      SmallVector<Value> rowIdx, colIdx;
      for (int64_t i = 0; i < rows; ++i)
        rowIdx.push_back(rowAt(i));
      for (int64_t j = 0; j < vectors; ++j)
        colIdx.push_back(colAt(j));
      // Accumulators: the tile of C as it is.
      SmallVector<Value> acc;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < vectors; ++j) {
          if (c.m)
            at[*c.m] = rowIdx[i];
          at[c.n] = colIdx[j];
          acc.push_back(vector::LoadOp::create(b, loc, vecType, viewC, indicesAt(mapC, at)));
        }
      // The reduction loops, carrying the accumulators.
      std::function<SmallVector<Value>(size_t, ValueRange)> reduce =
          [&](size_t k, ValueRange carried) -> SmallVector<Value> {
        if (k == c.reductions.size()) {
          SmallVector<Value> bv;
          for (int64_t j = 0; j < vectors; ++j) {
            at[c.n] = colIdx[j];
            bv.push_back(loadF32Vector(b, loc, viewB, indicesAt(mapB, at)));
          }
          SmallVector<Value> next;
          for (int64_t i = 0; i < rows; ++i) {
            if (c.m)
              at[*c.m] = rowIdx[i];
            Value a = loadF32(b, loc, inA, indicesAt(mapA, at));
            Value av = vector::BroadcastOp::create(b, loc, vecType, a);
            for (int64_t j = 0; j < vectors; ++j)
              next.push_back(
                  vector::FMAOp::create(b, loc, av, bv[j], carried[i * vectors + j]));
          }
          return next;
        }
        unsigned d = c.reductions[k];
        auto loop = scf::ForOp::create(b, loc, zero, size(d), one, carried);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        at[d] = loop.getInductionVar();
        SmallVector<Value> next = reduce(k + 1, loop.getRegionIterArgs());
        scf::YieldOp::create(b, loc, next);
        return SmallVector<Value>(loop.getResults());
      };
      SmallVector<Value> sums = reduce(0, acc);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < vectors; ++j) {
          if (c.m)
            at[*c.m] = rowIdx[i];
          at[c.n] = colIdx[j];
          vector::StoreOp::create(b, loc, sums[i * vectors + j], viewC, indicesAt(mapC, at));
        }
    });

    // What the tiles leave: rows [mMain, m) over all columns, then columns
    // [nMain, n) of the tiled rows.
    // A static extent that the tiles cover needs no part.
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    auto covered = [&](unsigned d, int64_t tile) {
      return !ShapedType::isDynamic(extents[d]) && extents[d] % tile == 0;
    };
    Value mLeft = arith::SubIOp::create(b, loc, m, mMain);
    Value nLeft = arith::SubIOp::create(b, loc, n, nMain);
    if (c.m && !covered(*c.m, rows))
      runPart(b, op, {{*c.m, {mMain, mLeft}}});
    SmallVector<std::pair<unsigned, std::pair<Value, Value>>> columns = {{c.n, {nMain, nLeft}}};
    if (c.m)
      columns.push_back({*c.m, {zero, mMain}});
    if (!covered(c.n, cols))
      runPart(b, op, columns);
    b.eraseOp(op);
  }

  /// The full columns [0, nMain) of a matrix-vector product C[n] +=
  /// A[k..] * B[k.., n] at the outer point `at`, B read row after row:
  /// the summed loops but the last run as they are; the last one takes
  /// kStreamRows rows of B per step, and for each vector of columns loads
  /// C, adds the rows' products in order and stores it.
  ///
  /// The register tile walks down a strip of 64 columns of B: at 3 KiB and
  /// more between rows, each row is a new page the hardware prefetchers
  /// do not follow, and the strip runs at the memory's latency. Here each
  /// of the rows is read in order, end to end: streams that the prefetchers
  /// see. C (a row of B's width) stays in the L1 or L2 cache. Every element
  /// still adds its products in the order of k, one fused multiply-add
  /// each, so the columns that both kernels cover get the register tile's
  /// results, to the bit (the last columns, past a whole vector here and
  /// past a whole tile there, run the op as it was).
  ///
  /// With `mMain` (C has rows: a few, at most kStreamMaxRows), each step
  /// runs, block of kStreamBlock columns by block, C's rows [0, mMain) in
  /// turn over the same block of B's kStreamRows rows: the first row reads
  /// it from memory, the others from the L1 cache. sgemm would copy all of
  /// B into blocks first, which a few rows do not repay.
  void emitStreaming(OpBuilder &b, Location loc, linalg::GenericOp op, const Contraction &c,
                     SmallVector<Value> &at, Value viewB, Value viewC, Value nMain,
                     Value mMain) {
    SmallVector<Range> loops = cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    auto size = [&](unsigned d) { return getValueOrCreateConstantIndexOp(b, loc, loops[d].size); };
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value inA = op.getDpsInputOperand(c.a)->get();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap mapA = maps[c.a], mapB = maps[c.b], mapC = maps[2];
    auto vecType = VectorType::get({kLanes}, b.getF32Type());
    unsigned last = c.reductions.back();

    // rowsPerStep rows of B from k0: for each vector of columns, C += the
    // rows' products in order.
    auto step = [&](Value k0, int64_t rowsPerStep) {
      OpBuilder::InsertionGuard rowsGuard(b);
      Value nLo = zero, nHi = nMain;
      if (c.m) {
        // Blocks of columns, and in each C's rows in turn: the block of
        // B's rows of this step stays in the L1 cache for all of them.
        Value block = arith::ConstantIndexOp::create(b, loc, kStreamBlock);
        auto blockLoop = scf::ForOp::create(b, loc, zero, nMain, block);
        b.setInsertionPointToStart(blockLoop.getBody());
        nLo = blockLoop.getInductionVar();
        nHi = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, nLo, block), nMain);
        auto mLoop = scf::ForOp::create(b, loc, zero, mMain, one);
        b.setInsertionPointToStart(mLoop.getBody());
        at[*c.m] = mLoop.getInductionVar();
      }
      SmallVector<Value> rowAt, av;
      for (int64_t r = 0; r < rowsPerStep; ++r) {
        rowAt.push_back(r == 0 ? k0
                               : arith::AddIOp::create(b, loc, k0,
                                                       arith::ConstantIndexOp::create(b, loc, r))
                                     .getResult());
        at[last] = rowAt.back();
        Value a = loadF32(b, loc, inA, indicesAt(mapA, at));
        av.push_back(vector::BroadcastOp::create(b, loc, vecType, a));
      }
      auto nLoop = scf::ForOp::create(b, loc, nLo, nHi,
                                      arith::ConstantIndexOp::create(b, loc, kLanes));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(nLoop.getBody());
      at[c.n] = nLoop.getInductionVar();
      Value acc = vector::LoadOp::create(b, loc, vecType, viewC, indicesAt(mapC, at));
      for (int64_t r = 0; r < rowsPerStep; ++r) {
        at[last] = rowAt[r];
        Value bv = loadF32Vector(b, loc, viewB, indicesAt(mapB, at));
        acc = vector::FMAOp::create(b, loc, av[r], bv, acc);
      }
      vector::StoreOp::create(b, loc, acc, viewC, indicesAt(mapC, at));
    };

    // The summed loops but the last as they are; the last in steps of rows.
    nestLoops(b, loc, ArrayRef<unsigned>(c.reductions).drop_back(), size, at, [&] {
      Value extent = size(last);
      Value rowsStep = arith::ConstantIndexOp::create(b, loc, kStreamRows);
      Value kMain = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, extent, rowsStep), rowsStep);
      {
        auto loop = scf::ForOp::create(b, loc, zero, kMain, rowsStep);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        step(loop.getInductionVar(), kStreamRows);
      }
      auto rest = scf::ForOp::create(b, loc, kMain, extent, one);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rest.getBody());
      step(rest.getInductionVar(), 1);
    });
  }
};

} // namespace
