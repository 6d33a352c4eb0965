//===- PdgDialect.h - the pdg dialect ---------------------------*- C++ -*-===//

#ifndef PDG_PDGDIALECT_H
#define PDG_PDGDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/IntegerSet.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "PdgDialect.h.inc"
#include "PdgEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "PdgTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "PdgAttrs.h.inc"

#define GET_OP_CLASSES
#include "PdgOps.h.inc"

#endif // PDG_PDGDIALECT_H
