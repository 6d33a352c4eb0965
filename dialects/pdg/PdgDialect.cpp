//===- PdgDialect.cpp - pdg dialect registration --------------------------===//

#include "PdgDialect.h"

using namespace mlir;
using namespace mlir::pdg;

#include "PdgDialect.cpp.inc"
#include "PdgEnums.cpp.inc"

void PdgDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "PdgOps.cpp.inc"
      >();
}
