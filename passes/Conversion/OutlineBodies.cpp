//===- OutlineBodies.cpp - pdg-outline-bodies -----------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGOUTLINEBODIES
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;
using namespace mlir::pdg;

namespace {

struct OutlineBodies : mlir::pdg::impl::PdgOutlineBodiesBase<OutlineBodies> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto graph : llvm::make_early_inc_range(module.getOps<GraphOp>()))
      for (auto node : graph.getBodyBlock().getOps<NodeOp>())
        outline(module, symbols, graph, node);
  }

  void outline(ModuleOp module, SymbolTable &symbols, GraphOp graph, NodeOp node) {
    MLIRContext *ctx = &getContext();
    ValueType type = node.getValueType();
    std::string base = (graph.getSymName() + "_" +
                        (node.getName() ? *node.getName() : StringRef("node")))
                           .str();
    llvm::SmallVector<Attribute> bodies;
    for (auto [k, region] : llvm::enumerate(node.getCases())) {
      Block &block = region.front();
      llvm::SmallVector<Type> argTypes(block.getArgumentTypes());
      argTypes.append(type.getRank(), IndexType::get(ctx));
      auto fnType = FunctionType::get(ctx, argTypes, {type.getPointType()});
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      auto fn = func::FuncOp::create(b, node.getLoc(), base + "_" + std::to_string(k),
                                     fnType);
      symbols.insert(fn); // renames on a clash
      fn.setPrivate();
      Block *entry = fn.addEntryBlock();
      IRMapping map;
      for (auto [from, to] : llvm::zip(block.getArguments(),
                                       entry->getArguments().take_front(block.getNumArguments())))
        map.map(from, to);
      OpBuilder fb = OpBuilder::atBlockEnd(entry);
      for (Operation &op : block) {
        if (auto yield = dyn_cast<YieldOp>(op)) {
          func::ReturnOp::create(fb, yield.getLoc(), map.lookup(yield.getValue()));
          continue;
        }
        if (auto point = dyn_cast<PointOp>(op)) {
          map.map(point.getResult(),
                  entry->getArgument(block.getNumArguments() +
                                     type.getDimPosition(point.getDim())));
          continue;
        }
        Operation *copy = fb.clone(op, map);
        // The coordinate along a dim is the matching trailing argument (also
        // inside nested regions).
        copy->walk([&](PointOp point) {
          int64_t pos = type.getDimPosition(point.getDim());
          point.getResult().replaceAllUsesWith(
              entry->getArgument(block.getNumArguments() + pos));
          point.erase();
        });
      }
      bodies.push_back(FlatSymbolRefAttr::get(fn.getSymNameAttr()));
      ++numOutlined;
    }
    node->setAttr("pdg.bodies", ArrayAttr::get(ctx, bodies));
  }
};

} // namespace
