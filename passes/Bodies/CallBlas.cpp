//===- CallBlas.cpp - pdg-call-blas ---------------------------------------===//
//
// A large f32 contraction C[.., m.., n..] += A[.., m.., k..] * B[.., k.., n..]
// on buffers becomes a call of `pdg_blas_sgemm` (pdg's C runtime,
// runtime/lib/blas.c, which calls oneMKL's or OpenBLAS's sgemm): a tuned
// sgemm packs its operands into blocks that fit the caches, which the
// register micro-kernels of pdg-register-tile-contractions do not. The loops
// are grouped: batch (read by A, B and C: a loop of calls), m (A and C), n
// (B and C) and k (summed, A and B); the loops of a group must be collapsible
// into one matrix dim at run time (consecutive in memory), and each matrix
// needs a contiguous dim, which the helper checks. The call is made only
// when m * n * k reaches `min-flops` and m and n `min-dim` at run time
// (sgemm copies its factors into blocks, which a matrix-vector product
// does not repay: the streamed kernel of pdg-register-tile-contractions
// reads the weights once); otherwise, or when the
// helper declines (no library at run time, or a layout sgemm cannot take),
// the op runs as it was (and is register-tiled later). Sizes known here to
// be too small leave the op alone.
//
// A fill of zeros into C right before the product (how a product's output
// starts) is dropped where the call is made: sgemm writes C with beta = 0
// instead of adding to it, so C is written once, not zeroed and then read
// back. The fill moves into the path that runs the op.
//
//===----------------------------------------------------------------------===//

#include "FillBefore.h"
#include "MultiplyAdd.h"
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGCALLBLAS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using mlir::pdg::isMultiplyAdd;

namespace {

constexpr StringLiteral kHelper = "pdg_blas_sgemm";

/// Which operands of the product a loop appears in.
enum class Group { Batch, M, N, K };

/// How a linalg.generic is a product of two matrices (per batch point).
struct Product {
  unsigned a, b;                           // input operand numbers
  SmallVector<unsigned> batch, m, n, k;    // loops of each group
};

/// The loops of `group` in the order `map` reads them.
SmallVector<unsigned> inOrder(AffineMap map, ArrayRef<unsigned> group) {
  SmallVector<unsigned> out;
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (llvm::is_contained(group, map.getDimPosition(r)))
      out.push_back(map.getDimPosition(r));
  return out;
}

std::optional<Product> match(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  Value out = op.getDpsInitOperand(0)->get();
  if (out == op.getDpsInputOperand(0)->get() || out == op.getDpsInputOperand(1)->get())
    return std::nullopt;
  for (Value v : op->getOperands()) {
    // (Strided: the helper takes each operand as pointer, offset, strides.)
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.getElementType().isF32() || !t.isStrided())
      return std::nullopt;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  if (!isMultiplyAdd(op))
    return std::nullopt;
  Product p{0, 1, {}, {}, {}, {}};
  auto iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    bool inA = maps[0].isFunctionOfDim(d), inB = maps[1].isFunctionOfDim(d),
         inC = maps[2].isFunctionOfDim(d);
    if (linalg::isReductionIterator(iterators[d])) {
      if (!inA || !inB || inC)
        return std::nullopt; // a sum over one factor only: not a product
      p.k.push_back(d);
    } else if (!inC) {
      return std::nullopt;
    } else if (inA && inB) {
      p.batch.push_back(d);
    } else if (inA) {
      p.m.push_back(d);
    } else if (inB) {
      p.n.push_back(d);
    } else {
      return std::nullopt; // C broadcast along a loop neither factor reads
    }
  }
  if (p.k.empty())
    return std::nullopt;
  // Each group collapses into one matrix dim: both operands that read it
  // must read its loops in the same order. Order the groups as C (m, n) and
  // A (k) read them.
  p.m = inOrder(maps[2], p.m);
  p.n = inOrder(maps[2], p.n);
  p.k = inOrder(maps[0], p.k);
  if (inOrder(maps[0], p.m) != p.m || inOrder(maps[1], p.n) != p.n ||
      inOrder(maps[1], p.k) != p.k)
    return std::nullopt;
  return p;
}

/// The fill of +0.0 into exactly `op`'s output right before it, if any:
/// the product then overwrites C (see the file's comment).
linalg::FillOp zeroFillBefore(linalg::GenericOp op) {
  linalg::FillOp fill = pdg::fillBefore(op);
  if (!fill)
    return nullptr;
  FloatAttr value;
  if (!matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant(&value)) ||
      !value.getValue().isPosZero())
    return nullptr;
  return fill;
}

/// func.func private @pdg_blas_sgemm(i64 m, i64 n, i64 k, then for A, B
/// and C: ptr, i64 offset, i64 stride, i64 stride; i32 overwrite) -> i32.
func::FuncOp declareHelper(ModuleOp module) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(kHelper))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = b.getI64Type(), ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Type> params = {i64, i64, i64};
  for (int i = 0; i < 3; ++i)
    params.append({ptr, i64, i64, i64});
  params.push_back(b.getI32Type());
  auto fn = func::FuncOp::create(b, module.getLoc(), kHelper,
                                 b.getFunctionType(params, {b.getI32Type()}));
  fn.setPrivate();
  return fn;
}

struct CallBlas : mlir::pdg::impl::PdgCallBlasBase<CallBlas> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    generalizeNamedProducts(module);
    std::vector<std::pair<linalg::GenericOp, Product>> found;
    module.walk([&](linalg::GenericOp op) {
      if (auto p = match(op); p && mayBeWorthIt(op, *p))
        found.push_back({op, *p});
    });
    if (found.empty())
      return;
    func::FuncOp helper = declareHelper(module);
    IRRewriter rewriter(&getContext());
    for (auto &[op, p] : found) {
      rewrite(rewriter, op, p, helper);
      ++numCalls;
    }
  }

  /// Named products on f32 buffers (linalg.matmul, batch_matmul, ...)
  /// as linalg.generic ops, which match() reads (and which the register
  /// micro-kernels take, where no call is made).
  void generalizeNamedProducts(ModuleOp module) {
    SmallVector<linalg::LinalgOp> named;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp>(op) && isa<linalg::ContractionOpInterface>(*op) &&
          op.hasPureBufferSemantics() && llvm::all_of(op->getOperandTypes(), [](Type t) {
            auto memref = dyn_cast<MemRefType>(t);
            return memref && memref.getElementType().isF32();
          }))
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
  }

  /// False if the sizes known here already rule a call out (the register
  /// micro-kernels then take the op as it is); the rest is checked at run
  /// time.
  bool mayBeWorthIt(linalg::GenericOp op, const Product &p) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto known = [&](ArrayRef<unsigned> group) -> std::optional<int64_t> {
      int64_t size = 1;
      for (unsigned d : group) {
        if (ShapedType::isDynamic(ranges[d]))
          return std::nullopt;
        size *= ranges[d];
      }
      return size;
    };
    std::optional<int64_t> m = known(p.m), n = known(p.n), k = known(p.k);
    if ((m && *m < minDim) || (n && *n < minDim))
      return false;
    return !(m && n && k && *m * *n * *k < minFlops);
  }

  void rewrite(IRRewriter &b, linalg::GenericOp op, const Product &p, func::FuncOp helper) {
    Location loc = op.getLoc();
    linalg::FillOp zeros = zeroFillBefore(op);
    b.setInsertionPoint(op);
    SmallVector<Range> loops = cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    auto size = [&](unsigned d) { return getValueOrCreateConstantIndexOp(b, loc, loops[d].size); };
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto product = [&](ArrayRef<unsigned> group) {
      Value v = one;
      for (unsigned d : group)
        v = arith::MulIOp::create(b, loc, v, size(d));
      return v;
    };
    Value m = product(p.m), n = product(p.n), k = product(p.k);

    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    unsigned operands[3] = {p.a, p.b, 2};
    SmallVector<memref::ExtractStridedMetadataOp, 3> meta;
    for (unsigned i : operands)
      meta.push_back(memref::ExtractStridedMetadataOp::create(b, loc, op->getOperand(i)));
    // The stride of loop `d` in operand `i` (of operands), and whether the
    // loops of `group` are consecutive in memory there.
    auto strideOf = [&](unsigned i, unsigned d) -> Value {
      AffineMap map = maps[operands[i]];
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        if (map.getDimPosition(r) == d)
          return meta[i].getStrides()[r];
      return zero;
    };
    Value collapsible = arith::ConstantIntOp::create(b, loc, 1, 1);
    auto groupStride = [&](unsigned i, ArrayRef<unsigned> group) -> Value {
      if (group.empty())
        return one;
      for (size_t j = 0; j + 1 < group.size(); ++j) {
        Value inner = arith::MulIOp::create(b, loc, strideOf(i, group[j + 1]), size(group[j + 1]));
        Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           strideOf(i, group[j]), inner);
        collapsible = arith::AndIOp::create(b, loc, collapsible, same);
      }
      return strideOf(i, group.back());
    };
    Type i64 = b.getI64Type();
    auto toI64 = [&](Value v) { return arith::IndexCastOp::create(b, loc, i64, v).getResult(); };
    SmallVector<Value> strides = {
        groupStride(0, p.m), groupStride(0, p.k), groupStride(1, p.k),
        groupStride(1, p.n), groupStride(2, p.m), groupStride(2, p.n)};
    SmallVector<Value> pointers;
    for (unsigned i = 0; i < 3; ++i) {
      Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, meta[i].getBaseBuffer());
      pointers.push_back(LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                                                  toI64(address)));
    }

    // Worth a call: m * n * k multiply-adds at least, and collapsible groups.
    Value work = arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, m, n), k);
    Value big = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, work,
                                      arith::ConstantIndexOp::create(b, loc, minFlops));
    Value minDimV = arith::ConstantIndexOp::create(b, loc, minDim);
    Value wide = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, m, minDimV),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, n, minDimV));
    Value worth = arith::AndIOp::create(
        b, loc, arith::AndIOp::create(b, loc, big, wide), collapsible);
    auto tryCall = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()}, worth,
                                     /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&tryCall.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, 0, 1)});
      b.setInsertionPointToStart(&tryCall.getThenRegion().front());
      // One call per batch point, its offsets moved along the batch loops.
      // The helper accepts or declines by layout alone, the same at every
      // point: `done` is whether all were made (where one was not, the
      // fallback fills and computes all of C again).
      Value overwrite = arith::ConstantIntOp::create(b, loc, zeros ? 1 : 0, 32);
      SmallVector<Value> offsets;
      for (unsigned i = 0; i < 3; ++i)
        offsets.push_back(meta[i].getOffset());
      Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
      std::function<Value(size_t, SmallVector<Value>, Value)> nest =
          [&](size_t j, SmallVector<Value> at, Value carried) -> Value {
        if (j == p.batch.size()) {
          SmallVector<Value> args = {toI64(m), toI64(n), toI64(k)};
          for (unsigned i = 0; i < 3; ++i)
            args.append({pointers[i], toI64(at[i]), toI64(strides[2 * i]),
                         toI64(strides[2 * i + 1])});
          args.push_back(overwrite);
          Value made = func::CallOp::create(b, loc, helper, args).getResult(0);
          Value zero32 = arith::ConstantIntOp::create(b, loc, 0, 32);
          Value madeI1 =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, made, zero32);
          return arith::AndIOp::create(b, loc, carried, madeI1);
        }
        unsigned d = p.batch[j];
        auto loop = scf::ForOp::create(b, loc, zero, size(d), one, ValueRange{carried});
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(loop.getBody());
        Value iv = loop.getInductionVar();
        SmallVector<Value> moved;
        for (unsigned i = 0; i < 3; ++i)
          moved.push_back(arith::AddIOp::create(
              b, loc, at[i], arith::MulIOp::create(b, loc, iv, strideOf(i, d))));
        Value result = nest(j + 1, moved, loop.getRegionIterArgs()[0]);
        scf::YieldOp::create(b, loc, ValueRange{result});
        return loop.getResult(0);
      };
      scf::YieldOp::create(b, loc, ValueRange{nest(0, offsets, ok)});
    }
    // Not called, or declined: the op as it was (after its fill).
    Value notDone = arith::XOrIOp::create(b, loc, tryCall.getResult(0),
                                          arith::ConstantIntOp::create(b, loc, 1, 1));
    auto fallback = scf::IfOp::create(b, loc, notDone, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&fallback.getThenRegion().front());
    if (zeros)
      b.moveOpBefore(zeros, fallback.thenBlock(), fallback.thenBlock()->begin());
    b.clone(*op);
    b.eraseOp(op);
  }
};

} // namespace
