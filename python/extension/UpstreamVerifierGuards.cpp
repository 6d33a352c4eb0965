//===- UpstreamVerifierGuards.cpp - IR upstream verifiers let through -----===//

#include "UpstreamVerifierGuards.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace {

/// tensor.expand_shape verifies without comparing the static entries of its
/// output_shape with its result type (`output_shape [-1, %n] : tensor<?xf32>
/// into tensor<1x?xf32>` passes); bufferizing it makes a memref.expand_shape,
/// whose verifier rejects it ("invalid output shape provided at pos 0").
bool checkExpandShapeOutputs(Operation *root) {
  bool ok = true;
  root->walk([&](tensor::ExpandShapeOp op) {
    RankedTensorType type = op.getResultType();
    llvm::ArrayRef<int64_t> sizes = op.getStaticOutputShape();
    if (sizes.size() != static_cast<size_t>(type.getRank()))
      return; // the upstream verifier reports this one
    for (auto [pos, size] : llvm::enumerate(sizes)) {
      if (ShapedType::isDynamic(size) || size == type.getDimSize(pos))
        continue;
      InFlightDiagnostic d = op.emitOpError() << "output_shape entry #" << pos << " is "
                                               << size << ", but the result type's size there is ";
      if (type.isDynamicDim(pos))
        d << "'?' (give an SSA value for it)";
      else
        d << type.getDimSize(pos);
      ok = false;
      return;
    }
  });
  return ok;
}

} // namespace

bool mlir::pdg::checkUpstreamVerifierGuards(Operation *root) {
  return checkExpandShapeOutputs(root);
}
