//===- MultiplyAdd.h - recognizing a product's body -------------*- C++ -*-===//
//
// The bodies that pdg-register-tile-contractions and pdg-call-blas rewrite:
// a linalg.generic whose region is `out + x * y` of its two inputs, either
// of them possibly widened first (bf16 to f32). Any other region (a
// subtraction first, a single op, another cast) is left alone.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_PASSES_BODIES_MULTIPLYADD_H
#define PDG_PASSES_BODIES_MULTIPLYADD_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pdg {

/// The block argument `v` is, or the block argument that `v` widens with
/// an arith.extf (a bf16 weight read as f32); null otherwise.
inline Value widenedArgument(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  return isa<BlockArgument>(v) ? v : Value();
}

/// True if the body of `op` is `out + x * y` (either order) of its two
/// inputs and its output, where either input may first be widened by an
/// arith.extf (bf16 weights: products and sums in f32).
inline bool isMultiplyAdd(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getNumArguments() != 3)
    return false;
  // Up to two widenings, then the multiply, the add and the yield.
  auto ops = body.getOperations().begin();
  size_t widenings = 0;
  while (widenings < 2 && isa<arith::ExtFOp>(&*ops)) {
    ++widenings;
    ++ops;
  }
  if (body.getOperations().size() != 3 + widenings)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&*ops);
  if (!mul)
    return false;
  auto add = dyn_cast_or_null<arith::AddFOp>(mul->getNextNode());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1), out = body.getArgument(2);
  Value lhs = widenedArgument(mul.getLhs()), rhs = widenedArgument(mul.getRhs());
  bool inputs = (lhs == in0 && rhs == in1) || (lhs == in1 && rhs == in0);
  bool accumulates = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
                     (add.getRhs() == out && add.getLhs() == mul.getResult());
  return inputs && accumulates;
}

} // namespace mlir::pdg

#endif // PDG_PASSES_BODIES_MULTIPLYADD_H
