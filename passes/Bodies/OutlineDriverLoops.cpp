//===- OutlineDriverLoops.cpp - pdg-outline-driver-loops ------------------===//
//
// The driver of a training program is one function holding every layer's
// loops, and LLVM's passes take time in its size for each loop they touch.
// - Parallel loops: 471 at 4 layers of gpt2-124m, some 1400 at 12.
//   mlir-translate outlines each OpenMP region with LLVM's CodeExtractor,
//   which first scans the whole function that holds it
//   (CodeExtractorAnalysisCache), so translating took time quadratic in the
//   depth: 2.1 s at 2 layers, 5.5 s at 4, 66.9 s at 12.
// - Element loops (zero fills, the additions of partial sums, the scans of
//   the sequences' ends): some 480 at 12 layers. opt's LoopVectorize
//   verifies the whole function after each loop it vectorizes (LLVM built
//   with assertions, as ours is): 25 of its 28 s on that driver.
// This pass moves each outermost scf.parallel of a function that is not a
// node's body, and each outermost scf.for there that calls nothing,
// forks nothing and allocates nothing, into a function of its own, before
// convert-scf-to-openmp.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGOUTLINEDRIVERLOOPS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

/// Whether the serial loop `loop` only computes on elements: nothing in it
/// calls a function, forks or allocates (an alloca must not outlive the
/// call that would hold it).
bool isElementLoop(scf::ForOp loop) {
  WalkResult result = loop.getBody()->walk([](Operation *op) {
    if (isa<CallOpInterface, scf::ParallelOp>(op) || hasEffect<MemoryEffects::Allocate>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The loops of `fn` that go into functions of their own: the outermost
/// parallel loops, and (with `elementLoops`) the outermost element loops
/// outside them.
SmallVector<Operation *> outermostLoops(func::FuncOp fn, bool elementLoops) {
  SmallVector<Operation *> loops;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto serial = dyn_cast<scf::ForOp>(op);
    if (!isa<scf::ParallelOp>(op) && !(elementLoops && serial && isElementLoop(serial)))
      return WalkResult::advance();
    loops.push_back(op);
    return WalkResult::skip();
  });
  return loops;
}

struct OutlineDriverLoops
    : mlir::pdg::impl::PdgOutlineDriverLoopsBase<OutlineDriverLoops> {
  using PdgOutlineDriverLoopsBase::PdgOutlineDriverLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> drivers;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && !fn->hasAttr("pdg.node"))
        drivers.push_back(fn);
    for (func::FuncOp fn : drivers) {
      unsigned count = 0;
      Operation *after = fn; // the new functions follow their driver, in order
      for (Operation *loop : outermostLoops(fn, elementLoops))
        after = outline(symbols, fn, after, loop, count++);
    }
  }

  func::FuncOp outline(SymbolTable &symbols, func::FuncOp driver, Operation *after,
                       Operation *loop, unsigned k) {
    // What the loop reads from outside: its operands and the values its
    // region uses. Constants are cloned into the new function instead (its
    // loops keep their constant bounds and strides).
    llvm::SetVector<Value> captured;
    for (Value v : loop->getOperands())
      captured.insert(v);
    getUsedValuesDefinedAbove(loop->getRegions(), captured);
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    for (Value v : captured) {
      Operation *def = v.getDefiningOp();
      if (def && def->getNumResults() == 1 && matchPattern(v, m_Constant()))
        constants.push_back(def);
      else
        arguments.push_back(v);
    }

    OpBuilder b(driver);
    b.setInsertionPointAfter(after);
    Location loc = loop->getLoc();
    bool parallel = isa<scf::ParallelOp>(loop);
    auto type = b.getFunctionType(ValueRange(arguments).getTypes(), loop->getResultTypes());
    // Not pdg_-prefixed: the library exports only those (native.py).
    std::string name =
        ((parallel ? "parallel_" : "loop_") + Twine(k) + "_of_" + driver.getSymName()).str();
    auto fn = func::FuncOp::create(b, loc, name, type);
    fn.setPrivate();
    // One call site each: LLVM would inline it straight back.
    fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    symbols.insert(fn); // already in place; renamed if the name is taken

    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [outer, inner] : llvm::zip(arguments, entry->getArguments()))
      map.map(outer, inner);
    for (Operation *def : constants)
      b.clone(*def, map);
    Operation *copy = b.clone(*loop, map);
    func::ReturnOp::create(b, loc, copy->getResults());

    b.setInsertionPoint(loop);
    auto call = func::CallOp::create(b, loc, fn, arguments);
    loop->replaceAllUsesWith(call.getResults());
    loop->erase();
    ++(parallel ? numParallel : numSerial);
    return fn;
  }
};

} // namespace
