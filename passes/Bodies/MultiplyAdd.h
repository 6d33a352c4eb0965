//===- MultiplyAdd.h - recognizing a product's body -------------*- C++ -*-===//
//
// The bodies that pdg-register-tile-contractions and pdg-call-blas rewrite:
// a linalg.generic whose region is `out + x * y` of its two inputs. Any
// other region (a subtraction first, a single op, a cast) is left alone.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_PASSES_BODIES_MULTIPLYADD_H
#define PDG_PASSES_BODIES_MULTIPLYADD_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pdg {

/// True if the body of `op` is `out + x * y` (either order) of its two
/// inputs and its output.
inline bool isMultiplyAdd(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  if (!mul)
    return false;
  auto add = dyn_cast_or_null<arith::AddFOp>(mul->getNextNode());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1), out = body.getArgument(2);
  bool inputs = (mul.getLhs() == in0 && mul.getRhs() == in1) ||
                (mul.getLhs() == in1 && mul.getRhs() == in0);
  bool accumulates = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
                     (add.getRhs() == out && add.getLhs() == mul.getResult());
  return inputs && accumulates;
}

} // namespace mlir::pdg

#endif // PDG_PASSES_BODIES_MULTIPLYADD_H
