"""pdg-lower-to-loops: a planned and scheduled pdg.graph becomes plain
functions. Node bodies are outlined, wrapped to write into their stores
and bufferized; the graph becomes the entry function that owns the stores
and the loops (driver.py). After this pass the module holds only func,
memref, scf, linalg, arith and math ops, ready for the LLVM lowering."""

from __future__ import annotations

import re

from mlir import ir

from pdg.passes.pipelines import OUTLINE, run_registered
from pdg.passes.registry import PassError

from .bodies import bufferize_bodies, wrapper_text
from .collectives import check_collectives
from .driver import GLOBALS, EntryABI, driver_text, slot_shape
from .guards import check_affine_constants, check_bodies, check_inputs
from .model import read_model
from .partials import summing_nodes
from .text import c_identifier
from .toolchain import ToolchainError, c_runtime
from .updated_in_place import find_in_place, in_place_suffix


def _funcs(module: ir.Module) -> dict[str, ir.Operation]:
    return {
        ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
        for op in module.body.operations
        if op.operation.name == "func.func"
    }


def lower_to_loops(module: ir.Module) -> list[EntryABI]:
    ctx = module.context
    graphs = [op.operation for op in module.body.operations if op.operation.name == "pdg.graph"]
    if any(
        "pdg.bodies" not in op.operation.attributes
        for g in graphs
        for op in g.regions[0].blocks[0].operations
        if op.operation.name == "pdg.node"
    ):
        run_registered(module, OUTLINE)
    check_bodies(module)
    models = [read_model(g) for g in graphs]
    _check_entry_names(models)
    for model in models:
        check_inputs(model)
        check_collectives(model)
        check_affine_constants(model.nodes)
    funcs = _funcs(module)
    in_place = [find_in_place(model, funcs) for model in models]
    shared = _shared_bodies(funcs)
    wrappers: dict[str, str] = {}  # wrapper key (a body's name) -> its text
    wrapper_of: dict[str, str] = {}  # body -> the key of the wrapper that runs it
    keys: dict[tuple, str] = {}  # (code, slot shape) -> wrapper key
    computes: dict[str, list[str]] = {}  # wrapper key -> the values its nodes compute
    for model, pairs in zip(models, in_place, strict=True):
        for node in model.nodes:
            pair = pairs.get(id(node.value))
            from_slot = pair.operands if pair else ()
            for case in node.cases:
                if case.body is None:  # a udf or a collective: a call of the runtime
                    continue
                code = shared[case.body]
                slot = slot_shape(model, node.value)
                # An update in place calls its own wrapper (the slot is also
                # an operand), under the body's name with a suffix.
                name = case.body + in_place_suffix(from_slot)
                key = keys.setdefault((code, tuple(slot), from_slot), name)
                wrapper_of[name] = key
                computes.setdefault(key, []).append(node.value.name)
                if key != name:
                    continue
                ftype = ir.FunctionType(ir.TypeAttr(funcs[code].attributes["function_type"]).value)
                wrappers[key] = wrapper_text(
                    code,
                    [str(t) for t in ftype.inputs],
                    ir.RankedTensorType(ftype.results[0]),
                    slot,
                    name=f"{key}_into",
                    from_slot=from_slot,
                )
    summing = [summing_nodes(model, funcs) for model in models]
    with ctx, ir.Location.unknown():
        bodies = ir.Module.create()
    for name, op in funcs.items():
        if shared[name] == name:
            bodies.body.append(op.detach_from_parent())
        else:  # its code is another body's
            op.erase()
    bodies, signatures = bufferize_bodies(bodies, wrappers)
    _mark_nodes(bodies, {signatures[k].name: values for k, values in computes.items()})
    by_body = {body: signatures[key] for body, key in wrapper_of.items()}
    texts, abis, used, in_parallel = [], [], set(), set()
    for model, sums, pairs in zip(models, summing, in_place, strict=True):
        text, abi, globals_used, parallel_wrappers = driver_text(model, by_body, sums, pairs)
        texts.append(text)
        abis.append(abi)
        used |= globals_used
        in_parallel |= parallel_wrappers
    _mark_in_parallel(bodies, in_parallel)
    _keep_shared_calls(bodies, texts)
    texts += [GLOBALS[name] for name in sorted(used)]
    for g in graphs:
        g.erase()
    body_text = str(bodies).rstrip()
    with ctx, ir.Location.unknown():
        lowered = ir.Module.parse(body_text[:-1] + "\n".join(texts) + "\n}")
    for op in list(lowered.body.operations):
        module.body.append(op.detach_from_parent())
    return abis


def _check_entry_names(models) -> None:
    """Each graph's entry is the C symbol pdg_<name> with the name's other
    characters made `_`: two graphs must not meet in one symbol, nor one
    meet a symbol of pdg's runtime (a graph named `step` would define
    pdg_step, the runtime's step counter)."""
    seen: dict[str, str] = {}
    reserved = _runtime_symbols()
    for model in models:
        graph = model.graph
        entry = "pdg_" + c_identifier(graph.name)
        if entry in reserved:
            raise PassError(
                f"graph '{graph.name}' would be compiled to the C symbol {entry}, which "
                "pdg's runtime defines; rename the graph",
                graph.op.location,
            )
        if entry in seen:
            raise PassError(
                f"graphs '{seen[entry]}' and '{graph.name}' would both be compiled to the "
                f"C symbol {entry}; rename one (names differing only in characters other "
                "than letters, digits and '_' collide)",
                graph.op.location,
            )
        seen[entry] = graph.name


def _runtime_symbols() -> set[str]:
    """The pdg_ symbols of the compiled code's support globals and of the
    C runtime's header (empty of the latter where the runtime is not built:
    the link would fail first)."""
    names = set(GLOBALS)
    try:
        _, include = c_runtime()
    except ToolchainError:
        return names
    header = (include / "pdg" / "runtime.h").read_text()
    return names | set(re.findall(r"\bpdg_\w+", header))


def _shared_bodies(funcs: dict[str, ir.Operation]) -> dict[str, str]:
    """Each outlined body -> the first body with the same code (itself if
    none before it). The layers of a model compute the same thing from
    other weights, which are arguments: their bodies are one function in
    the library, so its size and compile time do not grow with depth."""
    first: dict[str, str] = {}
    out = {}
    for name, fn in funcs.items():
        code = fn.get_asm(use_local_scope=True, assume_verified=True).replace(f"@{name}(", "@_(", 1)
        out[name] = first.setdefault(code, name)
    return out


def _keep_shared_calls(bodies: ir.Module, texts: list[str]) -> None:
    """Marks `noinline` the wrappers the entry calls from several places
    (the layers of a model): inlined, each call would be a copy of the
    code again, which LLVM optimizes in time that grows faster than its
    size (one outlined parallel region holding every layer's step)."""
    calls: dict[str, int] = {}
    for text in texts:
        for name in re.findall(r"func\.call @([\w$.]+)\(", text):
            calls[name] = calls.get(name, 0) + 1
    with bodies.context:
        for op in bodies.body.operations:
            fn = op.operation
            if fn.name != "func.func":
                continue
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            if calls.get(name, 0) > 1 and "passthrough" not in fn.attributes:
                fn.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])


def _mark_in_parallel(bodies: ir.Module, names: set[str]) -> None:
    """Marks the wrappers the driver calls inside its parallel loops
    (`pdg.in_parallel_loop`): pdg-parallelize-large-ops leaves their ops
    whole, since their points already share out the threads."""
    with bodies.context:
        for op in bodies.body.operations:
            fn = op.operation
            if fn.name == "func.func" and ir.StringAttr(fn.attributes["sym_name"]).value in names:
                fn.attributes["pdg.in_parallel_loop"] = ir.UnitAttr.get()


def _mark_nodes(bodies: ir.Module, computes: dict[str, list[str]]) -> None:
    """Marks each wrapper with the value its node computes (`pdg.node`):
    pdg-check-indices checks these functions, and the runtime names the
    node when an index there is out of range. A wrapper that several nodes
    share names the first, and lists the others (`pdg.shared_by`)."""
    with bodies.context:
        for op in bodies.body.operations:
            fn = op.operation
            if fn.name != "func.func":
                continue
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            if name in computes:
                first, *others = computes[name]
                fn.attributes["pdg.node"] = ir.StringAttr.get(first)
                if others:
                    fn.attributes["pdg.shared_by"] = ir.ArrayAttr.get(
                        [ir.StringAttr.get(x) for x in others]
                    )
