//===- PdgCollectives.td - communication between ranks --------------------===//
//
// Collectives over a worker dim (`pdg.dim @w < world W`): a value over w
// has one point per rank, and these ops are the only way one rank's point
// reaches another rank. Each names the worker dim it communicates over.
// all_reduce, all_gather and broadcast give a result defined over the
// input's domain without that dim, the same on every rank; reduce_scatter
// and shift give each rank a point of its own, so their result keeps the
// input's domain. An optional `name` (an attribute) names the result in
// diagnostics and in the compiled program, as a node's does.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_COLLECTIVES_TD
#define PDG_COLLECTIVES_TD

include "PdgDialect.td"
include "PdgTypes.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Pdg_ReduceSum : I32EnumAttrCase<"Sum", 0, "sum">;
def Pdg_ReduceMax : I32EnumAttrCase<"Max", 1, "max">;
def Pdg_Reduction : I32EnumAttr<"Reduction",
    "how an all-reduce combines the ranks' points",
    [Pdg_ReduceSum, Pdg_ReduceMax]> {
  let cppNamespace = "::mlir::pdg";
  let genSpecializedAttr = 0;
}
def Pdg_ReductionAttr : EnumAttr<Pdg_Dialect, Pdg_Reduction, "reduction"> {
  let assemblyFormat = "$value";
}

class Pdg_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Pdg_Op<mnemonic, !listconcat(traits, [HasParent<"GraphOp">, Pure,
        DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>])> {
  let results = (outs Pdg_ValueType:$result);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ValueType getInputType() { return ::llvm::cast<ValueType>(getInput().getType()); }
    ValueType getValueType() { return ::llvm::cast<ValueType>(getResult().getType()); }
  }];
}

def Pdg_AllReduceOp : Pdg_CollectiveOp<"all_reduce"> {
  let summary = "combines every rank's point of a value: their sum or maximum";
  let description = [{
    At each point of the result's domain, the sum (or the elementwise
    maximum) of the input's points over the worker dim, on every rank.
    A gradient computed from one rank's share of the batch becomes the
    gradient of the whole batch:

    ```mlir
    %g = pdg.all_reduce sum %gw over @w
        : !pdg.value<[w], tensor<4x4xf32>> -> !pdg.value<[], tensor<4x4xf32>>
    ```
  }];
  let arguments = (ins Pdg_ReductionAttr:$reduction, Pdg_ValueType:$input,
                   FlatSymbolRefAttr:$over, OptionalAttr<StrAttr>:$name);
  let assemblyFormat = [{
    $reduction $input `over` $over attr-dict `:` qualified(type($input))
    `->` qualified(type($result))
  }];
}

def Pdg_AllGatherOp : Pdg_CollectiveOp<"all_gather"> {
  let summary = "every rank's point of a value, stacked along a new leading dim";
  let description = [{
    At each point of the result's domain, the input's points of ranks
    0, 1, ..., W - 1 stacked along a leading dim of size W, on every rank:

    ```mlir
    %all = pdg.all_gather %x over @w
        : !pdg.value<[w, b], tensor<4xf32>> -> !pdg.value<[b], tensor<?x4xf32>>
    ```
  }];
  let arguments = (ins Pdg_ValueType:$input, FlatSymbolRefAttr:$over,
                   OptionalAttr<StrAttr>:$name);
  let assemblyFormat = [{
    $input `over` $over attr-dict `:` qualified(type($input)) `->`
    qualified(type($result))
  }];
}

def Pdg_BroadcastOp : Pdg_CollectiveOp<"broadcast"> {
  let summary = "one rank's point of a value, on every rank";
  let description = [{
    At each point of the result's domain, the input's point of rank `root`
    (e.g. the weights rank 0 loaded, for every rank to start from):

    ```mlir
    %w0 = pdg.broadcast %x from 0 over @w
        : !pdg.value<[w], tensor<16xf32>> -> !pdg.value<[], tensor<16xf32>>
    ```
  }];
  let arguments = (ins Pdg_ValueType:$input, I64Attr:$root,
                   FlatSymbolRefAttr:$over, OptionalAttr<StrAttr>:$name);
  let assemblyFormat = [{
    $input `from` $root `over` $over attr-dict `:` qualified(type($input))
    `->` qualified(type($result))
  }];
}

def Pdg_ReduceScatterOp : Pdg_CollectiveOp<"reduce_scatter"> {
  let summary = "each rank's block of the sum (or maximum) over the ranks";
  let description = [{
    The input's points have a leading dim of W blocks, one per rank. Rank
    r's point of the result is block r of the sum (or the elementwise
    maximum) of every rank's input point; the result keeps the input's
    domain, worker dim included, and its point drops the leading dim. The
    sum of an all-reduce, with each rank keeping only its share (e.g. the
    gradient of the weight rows a rank updates):

    ```mlir
    %mine = pdg.reduce_scatter sum %g over @w
        : !pdg.value<[w], tensor<2x8xf32>> -> !pdg.value<[w], tensor<8xf32>>
    ```

    The leading dim may be `?` or a size; either way it must be W when the
    program runs.
  }];
  let arguments = (ins Pdg_ReductionAttr:$reduction, Pdg_ValueType:$input,
                   FlatSymbolRefAttr:$over, OptionalAttr<StrAttr>:$name);
  let assemblyFormat = [{
    $reduction $input `over` $over attr-dict `:` qualified(type($input))
    `->` qualified(type($result))
  }];
}

def Pdg_ShiftOp : Pdg_CollectiveOp<"shift"> {
  let summary = "each rank's point of a value, moved `by` ranks along a ring";
  let description = [{
    Rank r's point of the result is rank (r - by) mod W's point of the
    input: with `by` = 1 every rank hands its point to the next rank and
    the last rank's point wraps around to rank 0. The result keeps the
    input's domain and point type. `by` may be negative (towards lower
    ranks). A pipeline stage passes its activations on this way; a ring
    exchange is W - 1 shifts by 1:

    ```mlir
    %prev = pdg.shift %act by 1 over @w
        : !pdg.value<[w, m], tensor<4xf32>> -> !pdg.value<[w, m], tensor<4xf32>>
    ```
  }];
  let arguments = (ins Pdg_ValueType:$input, I64Attr:$by,
                   FlatSymbolRefAttr:$over, OptionalAttr<StrAttr>:$name);
  let assemblyFormat = [{
    $input `by` $by `over` $over attr-dict `:` qualified(type($input)) `->`
    qualified(type($result))
  }];
}

#endif // PDG_COLLECTIVES_TD
