//===- UpstreamVerifierGuards.h - IR upstream verifiers let through -*- C++ -*-===//
//
// A few ops pass MLIR 22.1.8's verifiers although they are invalid, and
// fail only later, inside pdg's lowering, as an internal error far from
// their line. After a module parses and verifies, these checks report them
// at the op, like a verifier would. Each names the upstream gap and a
// reproducer; delete a check when upstream's verifier covers its case.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_UPSTREAMVERIFIERGUARDS_H
#define PDG_UPSTREAMVERIFIERGUARDS_H

#include "mlir/IR/Operation.h"

namespace mlir::pdg {

/// Emits an error at each op under `root` that upstream's verifier accepts
/// although it is invalid; returns false if there was one.
bool checkUpstreamVerifierGuards(Operation *root);

} // namespace mlir::pdg

#endif // PDG_UPSTREAMVERIFIERGUARDS_H
