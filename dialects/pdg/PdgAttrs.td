//===- PdgAttrs.td - pdg attributes ---------------------------------------===//

#ifndef PDG_ATTRS_TD
#define PDG_ATTRS_TD

include "PdgDialect.td"
include "mlir/IR/EnumAttr.td"

def Pdg_BoundStatic : I32EnumAttrCase<"Static", 0, "static">;
def Pdg_BoundLaunch : I32EnumAttrCase<"Launch", 1, "launch">;
def Pdg_BoundDynamic : I32EnumAttrCase<"Dynamic", 2, "dynamic">;
def Pdg_BoundKind : I32EnumAttr<"BoundKind",
    "when a dimension's bound becomes known",
    [Pdg_BoundStatic, Pdg_BoundLaunch, Pdg_BoundDynamic]> {
  let cppNamespace = "::mlir::pdg";
  let genSpecializedAttr = 0;
}
def Pdg_BoundKindAttr : EnumAttr<Pdg_Dialect, Pdg_BoundKind, "bound">;

def Pdg_AccessAttr : Pdg_Attr<"Access", "access"> {
  let summary = "how a consumer point reads a producer: a point or slice per producer dim";
  let description = [{
    One entry per dimension of the producer. An entry is either a point (an
    affine expression of the consumer's dims and the graph's bound symbols) or
    a half-open slice `max(lbs...) : min(ubs...)`. Each slice adds a leading
    spatial dimension, of symbolic size, to what the consumer's body receives.

    The expressions are stored flattened in one affine map; `layout` holds two
    counts per entry, `[#lower bounds, #upper bounds]`, where a point has
    `[1, 0]`. Standalone, dims and symbols are bound positionally:
    `#pdg.access<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>`. Inside a node
    the names come from the node's domain and symbols. The attribute checks
    only its structure; the ops that use it check that the expressions are
    affine, since they know the dims' names.
  }];
  let parameters = (ins
    "::mlir::AffineMap":$exprs,
    ArrayRefParameter<"int64_t", "[#lbs, #ubs] per entry">:$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    size_t getNumEntries() const { return getLayout().size() / 2; }
    bool isSlice(size_t entry) const { return getLayout()[2 * entry + 1] != 0; }
    /// The lower bounds (a point's single expression) of entry `entry`.
    ::llvm::ArrayRef<::mlir::AffineExpr> getLowerBounds(size_t entry) const;
    /// The upper bounds of a slice entry (empty for a point).
    ::llvm::ArrayRef<::mlir::AffineExpr> getUpperBounds(size_t entry) const;
    unsigned getNumDims() const { return getExprs().getNumDims(); }
    unsigned getNumSymbols() const { return getExprs().getNumSymbols(); }
    /// Builds an access from per-entry bound lists (`ubs[i]` empty: point).
    static AccessAttr fromEntries(
        ::mlir::MLIRContext *ctx, unsigned numDims, unsigned numSymbols,
        ::llvm::ArrayRef<::llvm::SmallVector<::mlir::AffineExpr>> lbs,
        ::llvm::ArrayRef<::llvm::SmallVector<::mlir::AffineExpr>> ubs);
  }];
}

def Pdg_StoreAttr : Pdg_Attr<"Store", "store"> {
  let summary = "where a value lives at run time, and how much of it";
  let description = [{
    Chosen by `pdg-plan-storage` from the value's footprint:
    `#pdg.store<window, [B, 64]>` keeps the last 64 steps of each of B
    sequences (a circular buffer). Kinds: `point` (only the latest step),
    `window` (circular buffer), `block` (the current block), `full` (every
    point, sized by the bounds), `growable` (every point of a dimension
    whose bound is discovered while running; grows by doubling), `partial`
    (read only by a sum over its parallel dims: one running partial sum per
    thread of the pool, extents 1), `input` (given by the caller). One extent per domain dim, an affine expression
    of the graph's bound symbols.
  }];
  let parameters = (ins
    StringRefParameter<"store kind">:$kind,
    ArrayRefParameter<"::mlir::StringAttr", "bound symbol names">:$symbols,
    "::mlir::AffineMap":$extents);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // PDG_ATTRS_TD
