//===- ReassociateReductions.cpp - pdg-reassociate-reductions -------------===//
//
// A floating-point reduction that stays innermost (a dot product over the
// contiguous head dim in attention scores) is one long chain of dependent
// adds: LLVM may not reorder them, so it cannot vectorize the loop or keep
// several partial sums. Marking the arithmetic of reduction bodies
// `reassoc` (and `contract`, for fused multiply-adds) allows both. Results
// change within rounding (the sum's order), which the tests bound.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGREASSOCIATEREDUCTIONS
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

struct ReassociateReductions
    : mlir::pdg::impl::PdgReassociateReductionsBase<ReassociateReductions> {
  void runOnOperation() override {
    auto flags = arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (llvm::none_of(op.getIteratorTypesArray(), linalg::isReductionIterator))
        return;
      op.getRegion().walk([&](arith::ArithFastMathInterface math) {
        // Conversions (arith.extf, arith.truncf) carry the flags optionally
        // and their LLVM forms take none: leave them alone.
        arith::FastMathFlagsAttr attr = math.getFastMathFlagsAttr();
        if (!attr)
          return;
        auto now = attr.getValue();
        math->setAttr(math.getFastMathAttrName(),
                      arith::FastMathFlagsAttr::get(op.getContext(), now | flags));
        ++numMarked;
      });
    });
  }
};

} // namespace
