//===- FillBefore.h - the fill that starts an op's output -------*- C++ -*-===//
//
// pdg-parallelize-large-ops and pdg-call-blas both look for a linalg.fill
// of an op's output right before the op: the first cuts it into the op's
// tiles, the second drops a fill of +0.0 for sgemm's beta = 0.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_PASSES_BODIES_FILLBEFORE_H
#define PDG_PASSES_BODIES_FILLBEFORE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pdg {

/// The fill of `op`'s one output right before it, if any, and if no input
/// of `op` is that output (which the fill would have changed first).
inline linalg::FillOp fillBefore(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() || op.getNumDpsInits() != 1)
    return nullptr;
  Value out = op.getDpsInitOperand(0)->get();
  if (fill.getDpsInitOperand(0)->get() != out)
    return nullptr;
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() == out)
      return nullptr;
  return fill;
}

} // namespace mlir::pdg

#endif // PDG_PASSES_BODIES_FILLBEFORE_H
