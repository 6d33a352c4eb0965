//===- PdgOps.td - pdg operations -----------------------------------------===//

#ifndef PDG_OPS_TD
#define PDG_OPS_TD

include "PdgDialect.td"
include "PdgTypes.td"
include "PdgAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Pdg_AccessArrayAttr : TypedArrayAttrBase<Pdg_AccessAttr, "array of accesses">;
def Pdg_IntegerSetArrayAttr : TypedArrayAttrBase<IntegerSetAttr, "array of integer sets">;

//===----------------------------------------------------------------------===//
// pdg.graph
//===----------------------------------------------------------------------===//

def Pdg_GraphOp : Pdg_Op<"graph", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock,
    RegionKindInterface, HasOnlyGraphRegion]> {
  let summary = "one program: dims, inputs, nodes and outputs in a graph region";
  let description = [{
    The body is a graph region: a node may read a value defined later, or
    itself (`x[t]` reads `x[t - 1]`). The verifier rejects cycles in which a
    value depends on itself at the same point, and recurrences without a base
    case.

    ```mlir
    pdg.graph @count {
      pdg.dim @t < 8
      %x = pdg.node "x" [t] -> tensor<i64>
        case (t == 0) { ... }
        case (t >= 1) (%p = %x[t - 1] : !pdg.value<[t], tensor<i64>>) { ... }
      pdg.output "x" %x : !pdg.value<[t], tensor<i64>>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The pdg.dim op named `name`, or null.
    class DimOp lookupDim(::llvm::StringRef name);
    /// The launch or dynamic dim whose bound symbol is `symbol`, or null.
    class DimOp lookupBoundSymbol(::llvm::StringRef symbol);
  }];
}

//===----------------------------------------------------------------------===//
// pdg.dim
//===----------------------------------------------------------------------===//

def Pdg_DimOp : Pdg_Op<"dim", [Symbol, HasParent<"GraphOp">]> {
  let summary = "a dimension and its bound";
  let description = [{
    A loop variable `0 <= d < bound`. The bound is static (an integer), given
    at launch (a named symbol), or dynamic: discovered while running, the
    dimension ends after the first point where the `until` value is true.
    Launch and dynamic bounds may carry a `max` the runtime enforces.

    ```mlir
    pdg.dim @i < 100
    pdg.dim @b < launch B max 64
    pdg.dim @t < dynamic T max 512 until %eos : !pdg.value<[b, t], tensor<i1>>
    pdg.dim @w < world W
    ```

    A `world` dim is a worker dim: a launch dim whose bound is the number
    of ranks the program runs on (the MPI communicator's size). Its points
    are the ranks; a value over it has one point on each rank, which only
    that rank computes and holds. Nodes read such a value only at their own
    rank's point; the collectives (pdg.all_reduce, pdg.all_gather,
    pdg.broadcast, pdg.reduce_scatter, pdg.shift) combine the ranks' points
    or move them between ranks.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Pdg_BoundKindAttr:$kind,
                   OptionalAttr<I64Attr>:$size, OptionalAttr<StrAttr>:$bound,
                   Optional<Pdg_ValueType>:$until, UnitAttr:$worker);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// pdg.input / pdg.output
//===----------------------------------------------------------------------===//

def Pdg_InputOp : Pdg_Op<"input", [HasParent<"GraphOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a program input (weights, prompts) defined over a domain";
  let description = [{
    `%w = pdg.input "wte" : !pdg.value<[], tensor<1024x256xf32>>`. Inputs are
    part of the program's signature: canonicalization never removes them.
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Pdg_ValueType:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Pdg_OutputOp : Pdg_Op<"output", [HasParent<"GraphOp">]> {
  let summary = "a program output";
  let description = [{
    `pdg.output "tokens" %tok : !pdg.value<[b, t], tensor<i64>>` returns every
    point of `%tok` under the name `tokens`.
  }];
  let arguments = (ins StrAttr:$name, Pdg_ValueType:$value);
  let assemblyFormat = "$name $value attr-dict `:` qualified(type($value))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// pdg.node
//===----------------------------------------------------------------------===//

def Pdg_NodeOp : Pdg_Op<"node", [
    HasParent<"GraphOp">, IsolatedFromAbove, Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a value computed point by point, possibly by cases";
  let description = [{
    Each region is one case. A case has a condition (an affine set over the
    node's domain and symbols), inputs read through accesses, and a body of
    upstream tensor ops computing the value at one point, ended by `pdg.yield`.
    At a point, the first case whose condition holds defines the value.
    Block arguments of case k are its inputs; operands are the inputs of all
    cases, in order.

    ```mlir
    %y = pdg.node "y" [b, t] (%k = %kc[b, max(0, t - 63) : t + 1]
                                : !pdg.value<[b, t], tensor<64xf32>>)
        -> tensor<64xf32> {
      ...
      pdg.yield %r : tensor<64xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Pdg_ValueType>:$inputs,
                   Pdg_AccessArrayAttr:$accesses,
                   Pdg_IntegerSetArrayAttr:$conditions,
                   StrArrayAttr:$symbols,
                   OptionalAttr<StrAttr>:$name);
  let results = (outs Pdg_ValueType:$result);
  let regions = (region VariadicRegion<SizedRegion<1>>:$cases);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    ValueType getValueType() { return ::llvm::cast<ValueType>(getResult().getType()); }
    /// Operand index of the first input of case `k`.
    unsigned getCaseInputStart(unsigned k);
    AccessAttr getAccess(unsigned input) {
      return ::llvm::cast<AccessAttr>(getAccesses()[input]);
    }
    ::mlir::IntegerSet getCondition(unsigned k) {
      return ::llvm::cast<::mlir::IntegerSetAttr>(getConditions()[k]).getValue();
    }
  }];
}

//===----------------------------------------------------------------------===//
// pdg.udf
//===----------------------------------------------------------------------===//

def Pdg_UdfOp : Pdg_Op<"udf", [HasParent<"GraphOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a value computed by a host callback";
  let description = [{
    Calls the host function registered under `callee` once per point of the
    domain with the accessed inputs, e.g. a reward on decoded text:

    ```mlir
    %r = pdg.udf "reward" [b] (%tok[b, 0 : T] : !pdg.value<[b, t], tensor<i64>>) -> tensor<f32>
    ```
    A callback may have effects (logging), so it is never removed as unused.
  }];
  let arguments = (ins StrAttr:$callee,
                   Variadic<Pdg_ValueType>:$inputs,
                   Pdg_AccessArrayAttr:$accesses,
                   StrArrayAttr:$symbols);
  let results = (outs Pdg_ValueType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    ValueType getValueType() { return ::llvm::cast<ValueType>(getResult().getType()); }
    AccessAttr getAccess(unsigned input) {
      return ::llvm::cast<AccessAttr>(getAccesses()[input]);
    }
  }];
}

include "PdgCollectives.td"

//===----------------------------------------------------------------------===//
// Ops inside a node body
//===----------------------------------------------------------------------===//

def Pdg_YieldOp : Pdg_Op<"yield", [HasParent<"NodeOp">, Pure, Terminator,
    ReturnLike]> {
  let summary = "the value of a node at the current point";
  let arguments = (ins AnyRankedTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Pdg_PointOp : Pdg_Op<"point", [Pure]> {
  let summary = "the coordinate of the current point along one dimension";
  let description = [{
    `%t = pdg.point @t : index` inside a node body whose domain contains `t`
    (for positions, e.g. rotary embeddings or masks).
  }];
  let arguments = (ins FlatSymbolRefAttr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // PDG_OPS_TD
