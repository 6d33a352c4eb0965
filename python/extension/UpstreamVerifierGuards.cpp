//===- UpstreamVerifierGuards.cpp - IR upstream verifiers mishandle -------===//

#include "UpstreamVerifierGuards.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"

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

/// The reassociation of tensor/memref.expand_shape and collapse_shape lists
/// dims of the expanded shape; the verifiers turn each into an affine dim
/// with an unsigned 32-bit position and abort on a negative one or one of
/// 2^32 - 1 (`[[-1, 1]]`, in custom or generic form: "willBeValidAffineMap"),
/// and wrap 2^32 to 0, accepting it. Any index outside the expanded rank is
/// refused here.
bool checkReassociationIndices(Operation *root) {
  bool ok = true;
  root->walk([&](Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (!ok || !llvm::is_contained({"tensor.expand_shape", "tensor.collapse_shape",
                                    "memref.expand_shape", "memref.collapse_shape"},
                                   name))
      return;
    std::optional<Attribute> attr = op->getInherentAttr("reassociation");
    auto groups = dyn_cast_or_null<ArrayAttr>(attr.value_or(nullptr));
    if (!groups)
      return; // the verifier reports a missing or malformed attribute
    int64_t rank = 0; // of the expanded side, the larger one
    for (Type t : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto shaped = dyn_cast<ShapedType>(t); shaped && shaped.hasRank())
        rank = std::max(rank, shaped.getRank());
    for (Attribute group : groups) {
      auto indices = dyn_cast<ArrayAttr>(group);
      for (Attribute index : indices ? indices.getValue() : llvm::ArrayRef<Attribute>()) {
        auto value = dyn_cast<IntegerAttr>(index);
        if (!value)
          continue;
        llvm::APInt v = value.getValue();
        if (v.isNegative() || v.getActiveBits() > 32 ||
            v.getZExtValue() >= static_cast<uint64_t>(rank)) {
          llvm::SmallString<24> text;
          v.toStringSigned(text);
          op->emitOpError() << "reassociation index " << text << " is not a dim of the expanded "
                            << "shape, which has rank " << rank << " (indices 0 to "
                            << rank - 1 << ")";
          ok = false;
          return;
        }
      }
    }
  });
  return ok;
}

} // namespace

bool mlir::pdg::checkBeforeUpstreamVerifiers(Operation *root) {
  return checkReassociationIndices(root);
}

bool mlir::pdg::checkAfterUpstreamVerifiers(Operation *root) {
  return checkExpandShapeOutputs(root);
}
