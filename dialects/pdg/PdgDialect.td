//===- PdgDialect.td - the pdg dialect ------------------------------------===//
//
// The pdg dialect holds one RLFT program as a polyhedral dependence graph:
// dimensions with bounds, values defined pointwise over a domain of those
// dimensions, and nodes that read other values through affine accesses.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_DIALECT_TD
#define PDG_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Pdg_Dialect : Dialect {
  let name = "pdg";
  let cppNamespace = "::mlir::pdg";
  let summary = "Polyhedral dependence graphs over symbolic dimensions";
  let description = [{
    A `pdg.graph` is one program. Its `pdg.dim` ops declare the dimensions
    (loop variables with a static, launch or dynamic bound). Every value has a
    `!pdg.value<[dims], tensor<...>>` type: one tensor per point of its domain.
    `pdg.node` computes a value point by point from other values, each read
    through an access that maps the consumer's point to a point or a slice of
    the producer's domain.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // Discardable attributes set by passes (pdg.store, pdg.schedule).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // Defined next to the storage classes they need.
    void registerTypes();
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

class Pdg_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pdg_Dialect, mnemonic, traits>;

class Pdg_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Pdg_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class Pdg_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Pdg_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // PDG_DIALECT_TD
