//===- PdgTypes.td - pdg types --------------------------------------------===//

#ifndef PDG_TYPES_TD
#define PDG_TYPES_TD

include "PdgDialect.td"

def Pdg_ValueType : Pdg_Type<"Value", "value"> {
  let summary = "a tensor per point of a domain";
  let description = [{
    `!pdg.value<[b, t], tensor<64xf32>>` is one `tensor<64xf32>` for every
    point `(b, t)` of the domain. The domain names `pdg.dim` symbols of the
    enclosing graph, outermost first; `[]` is a value with a single point.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "domain dimension names">:$domain,
    "::mlir::RankedTensorType":$pointType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Position of `dim` in the domain, or -1.
    int64_t getDimPosition(::llvm::StringRef dim) const;
    size_t getRank() const { return getDomain().size(); }
  }];
}

#endif // PDG_TYPES_TD
