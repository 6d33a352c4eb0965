"""Node bodies in destination-passing style, bufferized.

pdg-outline-bodies turns each node case into `@f(inputs..., coords...) ->
tensor`. Here each gets a wrapper `@f_into(inputs..., coords..., %out)`
that writes the result into `%out`, a slot of the node's store (the largest
shape the value can take), and returns the sizes of its dynamic dims. After
inlining, empty-tensor elimination and one-shot bufferization, the body
computes straight into the store: no allocation and no copy per step for
the result."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from pdg.passes.pipelines import BUFFERIZE, DEALLOCATE, run_registered

from .text import symbol

# Past this many bodies the entry is not one function: LLVM's -O3 time grows
# faster than linearly with a function's size (570 inlined bodies of a
# decoder's gradient: 38 s of opt and llc), so bodies stay calls.
INLINE_LIMIT = 200


@dataclass
class Wrapper:
    """A bufferized body: its symbol, parameter types (memrefs for the case
    inputs and the destination, index for coordinates) and how many sizes
    of the result's symbolic dims it returns (its only results)."""

    name: str
    params: list[str]
    sizes: int


def wrapper_text(
    body: str,
    inputs: list[str],
    result: ir.RankedTensorType,
    slot: list,
    name: str = "",
    from_slot: tuple[int, ...] = (),
) -> str:
    """The wrapper `name` (default `<body>_into`) of outlined body `body`
    (parameter types `inputs`) whose result has type `result`, written into
    a slot of shape `slot` (ints, or None for a size known at run time).
    `from_slot`: the body's parameters that read the slot itself (a value
    updated in place, updated_in_place.py): the wrapper has no parameter
    for them and passes the destination; bufferization then writes over
    it only where each element is read before it is written."""
    element = str(result.element_type)
    slot_type = "tensor<" + "".join(f"{'?' if s is None else s}x" for s in slot) + element + ">"
    # Inputs are views of other values' stores: never written in place.
    params = [
        f"%a{i}: {t}" + (" {bufferization.writable = false}" if t.startswith("tensor") else "")
        for i, t in enumerate(inputs)
        if i not in from_slot
    ]
    args = ", ".join("%out" if i in from_slot else f"%a{i}" for i in range(len(inputs)))
    lines = [
        f"func.func {symbol(name or body + '_into')}"
        f"({', '.join([*params, f'%out: {slot_type}'])}) -> "
        f"({slot_type}{', index' * _dynamic_count(result)}) {{",
        f"  %r = func.call {symbol(body)}({args}) : ({', '.join(inputs)}) -> {result}",
    ]
    sizes, dynamic = [], []
    for i, d in enumerate(result.shape):
        if ir.ShapedType.is_dynamic_size(d):
            lines.append(f"  %i{i} = arith.constant {i} : index")
            lines.append(f"  %d{i} = tensor.dim %r, %i{i} : {result}")
            sizes.append(f"%d{i}")
            dynamic.append(f"%d{i}")
        else:
            sizes.append(str(d))
    rank = len(result.shape)
    if str(result) == slot_type:
        # The whole slot: an insert_slice would fold away (and the result be
        # returned in a new buffer); this cannot.
        lines.append(
            f"  %w = bufferization.materialize_in_destination %r in %out "
            f": ({result}, {slot_type}) -> {slot_type}"
        )
    else:
        zeros, ones = ", ".join(["0"] * rank), ", ".join(["1"] * rank)
        lines.append(
            f"  %w = tensor.insert_slice %r into %out[{zeros}] [{', '.join(sizes)}] [{ones}] "
            f": {result} into {slot_type}"
        )
    rets = ", ".join(["%w", *dynamic])
    types = ", ".join([slot_type, *(["index"] * len(dynamic))])
    lines.append(f"  return {rets} : {types}")
    lines.append("}")
    return "\n".join(lines)


def _dynamic_count(t: ir.RankedTensorType) -> int:
    return sum(1 for d in t.shape if ir.ShapedType.is_dynamic_size(d))


def bufferize_bodies(
    bodies: ir.Module, wrappers: dict[str, str]
) -> tuple[ir.Module, dict[str, Wrapper]]:
    """A module of the outlined bodies (`bodies`) with the wrappers (body
    name -> wrapper text, named `<body>_into`) added, bufferized; and the
    wrappers' bufferized signatures by body name."""
    ctx = bodies.context
    text = str(bodies).rstrip()
    assert text.endswith("}")
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text[:-1] + "\n".join(wrappers.values()) + "\n}")
    run_registered(module, BUFFERIZE)
    _drop_destination_results(module, [f"{body}_into" for body in wrappers])
    run_registered(module, DEALLOCATE)
    out: dict[str, Wrapper] = {}
    by_name = {
        ir.StringAttr(op.attributes["sym_name"]).value: op
        for op in module.body.operations
        if op.operation.name == "func.func"
    }
    for body in wrappers:
        fn = by_name[f"{body}_into"].operation
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        _check_in_place(fn, body)
        # Only the entry calls it: private lets LLVM inline it there.
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private", ctx)
        if len(wrappers) > INLINE_LIMIT:
            fn.attributes["passthrough"] = ir.ArrayAttr.get(
                [ir.StringAttr.get("noinline", ctx)], context=ctx
            )
        out[body] = Wrapper(f"{body}_into", [str(t) for t in ftype.inputs], len(ftype.results))
    return module, out


def _drop_destination_results(module: ir.Module, names: list[str]) -> None:
    """Each wrapper returns its destination argument first: drop that
    result (drop-equivalent-buffer-results skips public functions). A
    wrapper returning another buffer keeps it, and _check_in_place
    reports it."""
    wanted = set(names)
    with module.context, ir.Location.unknown():
        for op in module.body.operations:
            fn = op.operation
            if (
                fn.name != "func.func"
                or ir.StringAttr(fn.attributes["sym_name"]).value not in wanted
            ):
                continue
            block = fn.regions[0].blocks[0]
            ret = list(block.operations)[-1]
            dest = block.arguments[len(block.arguments) - 1]
            if len(ret.operands) == 0 or ret.operands[0] != dest:
                continue
            rest = list(ret.operands)[1:]
            with ir.InsertionPoint(ret):
                func.ReturnOp(rest)
            ret.erase()
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
            fn.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(list(ftype.inputs), list(ftype.results)[1:])
            )


def _check_in_place(fn: ir.Operation, body: str) -> None:
    """The bufferized wrapper must return no buffer: its result was written
    in place into the destination argument (drop-equivalent-buffer-results
    removed the result that was that argument)."""
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    if any(isinstance(t, ir.MemRefType) for t in ftype.results):
        raise RuntimeError(
            f"internal error: the bufferized body {body} does not write its result in place"
        )
