//===- WidenI1Memrefs.cpp - pdg-widen-i1-memrefs --------------------------===//
//
// The one place that works around finalize-memref-to-llvm aborting on i1
// memrefs (MLIR 22.1.8, "integralElementType.getWidth() >= 8"): booleans
// are stored as i8 and stay i1 in registers.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGWIDENI1MEMREFS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

/// memref<...xi1> -> memref<...xi8>, same shape, layout and memory space.
Type widen(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.getElementType().isInteger(1))
    return type;
  return MemRefType::get(memref.getShape(), IntegerType::get(type.getContext(), 8),
                         memref.getLayout(), memref.getMemorySpace());
}

struct WidenI1Memrefs : mlir::pdg::impl::PdgWidenI1MemrefsBase<WidenI1Memrefs> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Globals holding booleans: i8 type, initial values widened.
    module.walk([&](memref::GlobalOp global) {
      Type wide = widen(global.getType());
      if (wide == global.getType())
        return;
      global.setType(cast<MemRefType>(wide));
      if (auto init = dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())) {
        auto i8 = IntegerType::get(&getContext(), 8);
        global.setInitialValueAttr(
            init.mapValues(i8, [](const APInt &v) { return v.zext(8); }));
      }
    });
    // Function signatures.
    module.walk([&](func::FuncOp fn) {
      FunctionType t = fn.getFunctionType();
      llvm::SmallVector<Type> ins, outs;
      for (Type x : t.getInputs())
        ins.push_back(widen(x));
      for (Type x : t.getResults())
        outs.push_back(widen(x));
      fn.setFunctionType(FunctionType::get(&getContext(), ins, outs));
    });
    // Every memref value of i1: block arguments and results.
    module.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(widen(arg.getType()));
      for (OpResult r : op->getResults())
        r.setType(widen(r.getType()));
    });
    // Loads now give i8: truncate for their i1 users. Stores take i8: extend.
    llvm::SmallVector<Operation *> loads;
    module.walk([&](memref::LoadOp load) { loads.push_back(load); });
    for (Operation *op : loads) {
      auto load = cast<memref::LoadOp>(op);
      Type elem = load.getMemRefType().getElementType();
      if (!elem.isInteger(8) || load.getResult().getType() == elem)
        continue;
      // The result still says i1: only memref values were widened above.
      OpBuilder b(load->getContext());
      b.setInsertionPointAfter(load);
      Value old = load.getResult();
      old.setType(elem);
      auto narrow = arith::TruncIOp::create(b, load.getLoc(), b.getI1Type(), old);
      old.replaceAllUsesExcept(narrow.getResult(), narrow);
    }
    module.walk([&](memref::StoreOp store) {
      if (store.getValueToStore().getType().isInteger(1) &&
          store.getMemRefType().getElementType().isInteger(8)) {
        OpBuilder b(store);
        auto wide = arith::ExtUIOp::create(b, store.getLoc(), b.getI8Type(),
                                           store.getValueToStore());
        store.getValueMutable().assign(wide);
      }
    });
  }
};

} // namespace
