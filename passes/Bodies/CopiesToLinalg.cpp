//===- CopiesToLinalg.cpp - pdg-copies-to-linalg --------------------------===//
//
// memref.copy between strided views lowers (finalize-memref-to-llvm) to a
// call to `memrefCopy` from MLIR's C runner library. Compiled pdg programs
// must not need that library at run time, so copies become linalg.copy,
// which convert-linalg-to-loops turns into plain loops.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::pdg {
#define GEN_PASS_DEF_PDGCOPIESTOLINALG
#include "Passes.h.inc"
} // namespace mlir::pdg

using namespace mlir;

namespace {

struct CopiesToLinalg : mlir::pdg::impl::PdgCopiesToLinalgBase<CopiesToLinalg> {
  void runOnOperation() override {
    llvm::SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
      ++numRewritten;
    }
  }
};

} // namespace
