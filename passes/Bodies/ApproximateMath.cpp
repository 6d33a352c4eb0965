//===- ApproximateMath.cpp - pdg-approximate-math -------------------------===//
//
// Math functions as inline code instead of calls into the C library.
// LLVM lowers math.log1p as log(1 + x), which loses every bit of a small x
// (0 below 6e-8), and turns math.exp into glibc calls picked by loop shape
// and CPU (libmvec's 8- and 4-lane variants, the scalar expf in
// remainders). Upstream's polynomial approximations (a range reduction, a
// polynomial, explicit fma) keep log1p's small x, and give every element
// the same arithmetic on every x86-64 machine. Which ops: the pass option
// (native.APPROXIMATE_MATH picks them, and says why).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGAPPROXIMATEMATH
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

// The ops upstream's populateMathPolynomialApproximationPatterns has an
// approximation for (MLIR 22.1.8). A name outside it would be ignored by
// the patterns without a word, so the pass refuses it.
constexpr llvm::StringLiteral kApproximable[] = {"atan", "atan2", "cos",   "erf",  "erfc", "exp",
                                                 "expm1", "log", "log1p", "log2", "sin",  "tanh"};

struct ApproximateMath : mlir::pdg::impl::PdgApproximateMathBase<ApproximateMath> {
  using PdgApproximateMathBase::PdgApproximateMathBase;

  void runOnOperation() override {
    llvm::SmallVector<std::string> names(ops.begin(), ops.end());
    for (const std::string &name : names) {
      if (!llvm::is_contained(kApproximable, StringRef(name))) {
        getOperation()->emitError()
            << "pdg-approximate-math: no approximation of math." << name
            << "; it has: " << llvm::join(llvm::ArrayRef(kApproximable), ", ");
        return signalPassFailure();
      }
    }
    auto chosen = [&](StringRef name) {
      name.consume_front("math.");
      return llvm::is_contained(names, name);
    };
    // Only the chosen ops and what their rewrites make: a greedy rewrite of
    // the whole module would also fold and simplify everything else in it.
    llvm::SmallVector<Operation *> found;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) && chosen(op->getName().getStringRef()))
        found.push_back(op);
    });
    if (found.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, chosen);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(found, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
