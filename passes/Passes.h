//===- Passes.h - pdg passes written in C++ ---------------------*- C++ -*-===//

#ifndef PDG_PASSES_H
#define PDG_PASSES_H

#include "PdgDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pdg {

#define GEN_PASS_DECL
#include "Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"

} // namespace mlir::pdg

#endif // PDG_PASSES_H
