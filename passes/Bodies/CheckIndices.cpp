//===- CheckIndices.cpp - pdg-check-indices -------------------------------===//
//
// Loads and stores at indices that come from data (take, embedding lookups,
// gathers) get a bounds check. A bad index is the user's data, not a bug of
// the compiler: it must stop the run with a message naming the node and the
// point (pdg's runtime reports it), never read or write outside a buffer.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGCHECKINDICES
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

constexpr StringLiteral kFault = "pdg_index_fault";
constexpr StringLiteral kNodeAttr = "pdg.node";
constexpr unsigned kCoords = 8; // PDG_FAULT_COORDS in pdg/runtime.h

/// True if `index` is computed from data: an integer cast to index,
/// possibly offset or scaled by other indices.
bool fromData(Value index, unsigned depth = 0) {
  Operation *def = index.getDefiningOp();
  if (!def || depth > 4)
    return false;
  if (auto cast = dyn_cast<arith::IndexCastOp>(def))
    return !cast.getIn().getType().isIndex();
  if (auto cast = dyn_cast<arith::IndexCastUIOp>(def))
    return !cast.getIn().getType().isIndex();
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return fromData(def->getOperand(0), depth + 1) || fromData(def->getOperand(1), depth + 1);
  return false;
}

/// `@pdg_index_fault(i64 site, i64 index, i64 extent, i64 n, i64 x 8)`,
/// declared in `module` if it is not yet.
func::FuncOp faultFunction(ModuleOp module) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(kFault))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<Type> params(4 + kCoords, b.getI64Type());
  auto fn = func::FuncOp::create(b, module.getLoc(), kFault, b.getFunctionType(params, {}));
  fn.setPrivate();
  return fn;
}

struct CheckIndices : mlir::pdg::impl::PdgCheckIndicesBase<CheckIndices> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The checked indices in walk order, which numbers the sites.
    struct Site {
      Operation *access;
      Value memref;
      unsigned dim;     // of the memref
      unsigned operand; // of the access
    };
    SmallVector<Site> sites;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(kNodeAttr) || fn.isExternal())
        continue;
      fn.walk([&](Operation *op) {
        Value memref;
        OperandRange indices = op->getOperands();
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          memref = load.getMemRef();
          indices = load.getIndicesMutable();
        } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
          memref = store.getMemRef();
          indices = store.getIndicesMutable();
        } else {
          return;
        }
        if (indices.empty())
          return;
        unsigned first = indices.getBeginOperandIndex();
        for (auto [k, index] : llvm::enumerate(indices))
          if (fromData(index))
            sites.push_back({op, memref, unsigned(k), first + unsigned(k)});
      });
    }
    if (sites.empty())
      return;
    func::FuncOp fault = faultFunction(module);
    OpBuilder b(&getContext());
    for (auto [number, site] : llvm::enumerate(sites)) {
      Operation *op = site.access;
      Location loc = op->getLoc();
      Value index = op->getOperand(site.operand);
      b.setInsertionPoint(op);
      Value extent = memref::DimOp::create(b, loc, site.memref, site.dim);
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, extent);
      Value outside = arith::XOrIOp::create(
          b, loc, inside, arith::ConstantIntOp::create(b, loc, 1, 1));
      auto report = scf::IfOp::create(b, loc, outside, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(report.thenBlock());
        auto i64 = [&](Value v) -> Value {
          return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
        };
        SmallVector<Value> args = {arith::ConstantIntOp::create(b, loc, number, 64), i64(index),
                                   i64(extent)};
        auto fn = op->getParentOfType<func::FuncOp>();
        SmallVector<Value> coords;
        for (BlockArgument arg : fn.getArguments())
          if (arg.getType().isIndex() && coords.size() < kCoords)
            coords.push_back(arg);
        args.push_back(arith::ConstantIntOp::create(b, loc, coords.size(), 64));
        for (Value c : coords)
          args.push_back(i64(c));
        Value zero64 = arith::ConstantIntOp::create(b, loc, 0, 64);
        args.resize(4 + kCoords, zero64);
        func::CallOp::create(b, loc, fault, args);
      }
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value safe = arith::SelectOp::create(b, loc, inside, index, zero);
      op->setOperand(site.operand, safe);
      ++numChecked;
    }
  }
};

} // namespace
