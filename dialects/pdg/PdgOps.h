//===- PdgOps.h - helpers shared by op parsing, printing and checks -*- C++ -*-===//

#ifndef PDG_PDGOPS_H
#define PDG_PDGOPS_H

#include "PdgDialect.h"
#include <string>

namespace mlir::pdg {

/// The names of a node's domain dims and symbols, as the syntax uses them.
llvm::SmallVector<std::string> domainNames(ValueType type);
llvm::SmallVector<std::string> symbolNames(ArrayAttr symbols);

/// The tensor type a body receives for `producer` read through `access`: one
/// leading dim per slice entry (static when the slice has a constant size),
/// then the producer's per-point shape.
RankedTensorType accessedType(ValueType producer, AccessAttr access);

/// How a value is called in diagnostics: `'x'` for named nodes and inputs.
std::string describeValue(Value value);

/// Checks one access of `consumer` (domain `domain`, symbols `symbols`)
/// reading `producer`, for input `index`.
LogicalResult verifyAccess(Operation *consumer, unsigned index, Value producer,
                           AccessAttr access, ValueType domain,
                           ArrayAttr symbols);

/// Checks that a node's symbols are bound symbols of the graph.
LogicalResult verifySymbols(Operation *op, ValueType domain, ArrayAttr symbols);

/// Checks that every dim of `type`'s domain is declared in the graph.
LogicalResult verifyDomainDeclared(Operation *op, ValueType type,
                                   llvm::StringRef what);

/// Whether `op` is one of the collectives (PdgCollectives.td).
bool isCollective(Operation *op);

} // namespace mlir::pdg

#endif // PDG_PDGOPS_H
