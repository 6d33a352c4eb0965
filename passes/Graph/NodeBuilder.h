//===- NodeBuilder.h - creating pdg.node ops in passes ----------*- C++ -*-===//
//
// Passes that rewrite the graph (incrementalize, fuse, vectorize) build new
// nodes from parts: inputs with their accesses, one condition per case,
// the symbols the accesses and conditions use, a name and a value type.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_NODE_BUILDER_H
#define PDG_NODE_BUILDER_H

#include "PdgOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::pdg {

/// A pdg.node of `type` reading `inputs` through `accesses`, with one empty
/// region per condition: the caller fills in the case bodies. No name when
/// `name` is null.
inline NodeOp createNode(OpBuilder &b, Location loc, Type type, ValueRange inputs,
                         ArrayRef<Attribute> accesses, ArrayRef<Attribute> conditions,
                         ArrayAttr symbols, StringAttr name) {
  MLIRContext *ctx = b.getContext();
  OperationState state(loc, NodeOp::getOperationName());
  state.addOperands(inputs);
  state.addAttribute("accesses", ArrayAttr::get(ctx, accesses));
  state.addAttribute("conditions", ArrayAttr::get(ctx, conditions));
  state.addAttribute("symbols", symbols);
  if (name)
    state.addAttribute("name", name);
  state.addTypes(type);
  for (size_t k = 0; k < conditions.size(); ++k)
    state.addRegion();
  return cast<NodeOp>(b.create(state));
}

} // namespace mlir::pdg

#endif // PDG_NODE_BUILDER_H
