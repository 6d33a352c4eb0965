//===- UpstreamParserGuards.h - inputs that abort upstream's parser -*- C++ -*-===//
//
// A few inputs make MLIR 22.1.8's parser abort (report_fatal_error or an
// assertion, or a stack overflow on deep nesting) instead of reporting an
// error. pdg-opt must never crash on user
// input, so these are recognized in the source text before it is parsed and
// reported as ordinary located errors. Each guard names the upstream
// behaviour and a reproducer; delete a guard when upstream handles its case.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_UPSTREAMPARSERGUARDS_H
#define PDG_UPSTREAMPARSERGUARDS_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::pdg {

/// Emits an error (with file:line:col) and returns false if `source` holds an
/// input known to abort the upstream parser.
bool checkUpstreamParserGuards(llvm::StringRef source, llvm::StringRef filename,
                               MLIRContext *ctx);

} // namespace mlir::pdg

#endif // PDG_UPSTREAMPARSERGUARDS_H
