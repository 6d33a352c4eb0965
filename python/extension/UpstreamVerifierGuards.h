//===- UpstreamVerifierGuards.h - IR upstream verifiers mishandle -*- C++ -*-===//
//
// Some ops make MLIR 22.1.8's verifiers abort (an assertion) instead of
// reporting an error, and some pass them although they are invalid and fail
// only later, inside pdg's lowering, as an internal error far from their
// line. parse_source runs these checks around the verifier, reporting at the
// op like a verifier would. Each names the upstream gap and a reproducer;
// delete a check when upstream's verifier covers its case.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_UPSTREAMVERIFIERGUARDS_H
#define PDG_UPSTREAMVERIFIERGUARDS_H

#include "mlir/IR/Operation.h"

namespace mlir::pdg {

/// Before verifying: emits an error at each op under `root` that would make
/// an upstream verifier abort; returns false if there was one.
bool checkBeforeUpstreamVerifiers(Operation *root);

/// After verifying: emits an error at each op under `root` that upstream's
/// verifier accepts although it is invalid; returns false if there was one.
bool checkAfterUpstreamVerifiers(Operation *root);

} // namespace mlir::pdg

#endif // PDG_UPSTREAMVERIFIERGUARDS_H
