//===- RuntimeFunctions.h - declaring pdg's C runtime functions -*- C++ -*-===//
//
// Passes that emit calls into pdg's C runtime (runtime/include/pdg/runtime.h)
// declare each function once, privately, in the module; a declaration that
// is already there with another type is refused, since the call would then
// pass the runtime arguments it does not read.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_PASSES_BODIES_RUNTIMEFUNCTIONS_H
#define PDG_PASSES_BODIES_RUNTIMEFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::pdg {

/// The runtime's function `name` of type `type`, declared in `module` if it
/// is not; null (with an error on the declaration) if it is declared with
/// another type.
inline func::FuncOp runtimeFunction(ModuleOp module, StringRef name, FunctionType type) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name)) {
    if (fn.getFunctionType() == type)
      return fn;
    fn.emitError() << "@" << name << " is declared with another type than " << type;
    return {};
  }
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

} // namespace mlir::pdg

#endif // PDG_PASSES_BODIES_RUNTIMEFUNCTIONS_H
