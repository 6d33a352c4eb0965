"""A value updated in place along a loop: the carrier and its update share
one store (part of the lowering: lower.py picks the pairs, the Driver
gives them one buffer).

A training program defines each parameter (and each optimizer moment) as
two values over the iteration dim i:

    w_at[i] = w            (i == 0)     the weights iteration i reads
            = sub[i - 1]   (i >= 1)
    sub[i]  = w_at[i] - lr * step(...)  the update

Each has a one-slot store, so the plan holds two parameter-sized buffers
per weight and moment, and each iteration copies `sub`'s slot into
`w_at`'s. When every other reader of `w_at[i]` runs before `sub[i]` in
the iteration, `sub[i]` may be written over `w_at[i]`: one buffer, the
copy at i >= 1 gone (the slot already holds `sub[i - 1]`), and the update
reads its operand from the buffer it writes.

The update's body gets the shared slot as its destination and as that
operand (bodies.wrapper_text's `from_slot`): one-shot bufferization sees the
read and the write of one tensor and writes in place only where that is
safe (an elementwise loop reads each element before it writes it), or
computes into a temporary first. Either way the values are those of two
stores.

A pair qualifies when
- both are nodes over the same single sequential dim d (stepping
  forward), scheduled directly in its loop, with one-slot point stores of
  one fixed shape and element type, and the carrier is no output;
- the carrier has one case that reads only the update at d - 1 and
  returns it unchanged, and no other case reads the update;
- the update has one case of pdg code (no callback or
  collective) reading the carrier only at its own step, as parameters of
  the slot's exact type;
- every other read of the carrier is at its own step d, by a node that
  runs before the update in the loop's body (the Driver checks the order
  it emitted against this, see Driver.check_in_place).

When the carrier's first step copies a whole input that nothing else
reads (a training program's initial weights and moments), the shared
store is that input's buffer: the first step's copy is gone too, and an
output returning the update's slot returns the input's memory. The
caller donates the array (`CompiledProgram.run(..., donate=...)`) or the
runtime passes a copy; the manifest lists these inputs (`abi.donated`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from pdg.analysis.graph import Value

from .model import LoweringModel, Node


@dataclass
class InPlace:
    carrier: Value  # w_at: what the loop's step reads
    update: Value  # sub: written over it
    operands: tuple[int, ...]  # positions in the update's case reads that read the carrier
    copy_case: int  # the carrier's case that copies the update's previous step
    # The input the carrier's other case copies at the first step, when
    # nothing else reads it: the store may be that input's own buffer,
    # which the caller gives up (see `donor_case`).
    donor: Value | None = None
    donor_case: int | None = None


def in_place_suffix(operands: tuple[int, ...]) -> str:
    """What an update's wrapper adds to its body's name: a body that other
    nodes run with all their operands keeps its own wrapper."""
    return "".join(f"_in_place{k}" for k in operands)


def emission_key(node: Node, depth: int) -> tuple:
    """Where the Driver emits `node` (Driver.run_groups): by its group at
    each level of nesting, a missing level counting as group 0 (a nest's
    own members run before its inner groups), then in schedule order."""
    return (*node.path, *(0,) * (depth - len(node.path)), node.order)


def _one_slot(model: LoweringModel, v: Value) -> bool:
    store = model.store(v)
    return store.kind == "point" and all(e == "1" for e in store.extents)


def _returns_argument(fn: ir.Operation, k: int) -> bool:
    """The outlined body `fn` is `return %arg<k>` and nothing else."""
    block = fn.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 1 or len(ops[0].operands) != 1:
        return False
    operand = ops[0].operands[0]
    return isinstance(operand, ir.BlockArgument) and operand.arg_number == k


def _param_types(fn: ir.Operation) -> list[str]:
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    return [str(t) for t in ftype.inputs]


def _copy_case(node: Node, update: Value, d: str, funcs: dict) -> int | None:
    """The carrier's case that copies the update at d - 1, if it is the
    only case reading the update."""
    found = None
    for k, case in enumerate(node.cases):
        if not any(r.producer is update for r in case.reads):
            continue
        if found is not None or case.body is None or len(case.reads) != 1:
            return None
        (read,) = case.reads
        if read.entries != [("point", f"({d} + -1)")]:
            return None
        if not _returns_argument(funcs[case.body], 0):
            return None
        found = k
    return found


def find_in_place(model: LoweringModel, funcs: dict[str, ir.Operation]) -> dict[int, InPlace]:
    """id(update) -> its pair, for every pair that qualifies; `funcs`: the
    outlined bodies by name (tensor level)."""
    graph = model.graph
    nodes = {id(n.value): n for n in model.nodes}
    outputs = {id(v) for _, v in graph.outputs}
    readers: dict[int, list] = {}
    for read in graph.reads:
        readers.setdefault(id(read.producer), []).append(read)
    depth = max((len(n.path) for n in model.nodes), default=0)
    found: dict[int, InPlace] = {}
    for node in model.nodes:
        v = node.value
        if v.kind != "node" or len(v.domain) != 1 or len(node.cases) != 1:
            continue
        (d,) = v.domain
        (case,) = node.cases
        if case.body is None or node.loops != [d] or node.reverse:
            continue
        if model.roles.get(d) != "sequential" or not _one_slot(model, v) or None in v.shape:
            continue
        # The carrier: what the update reads at its own step, carried from
        # the update's previous step.
        carriers = {id(r.producer): r.producer for r in case.reads if r.producer.kind == "node"}
        for carrier in carriers.values():
            c = nodes.get(id(carrier))
            if c is None or id(carrier) in outputs or id(carrier) in found:
                continue
            if carrier.domain != v.domain or c.loops != [d] or c.reverse:
                continue
            if not _one_slot(model, carrier) or (carrier.shape, carrier.element) != (
                v.shape,
                v.element,
            ):
                continue
            copy = _copy_case(c, v, d, funcs)
            if copy is None:
                continue
            operands = tuple(k for k, r in enumerate(case.reads) if r.producer is carrier)
            own_step = [("point", d)]
            if any(case.reads[k].entries != own_step for k in operands):
                continue
            slot = f"tensor<{'x'.join(map(str, v.shape))}{'x' if v.shape else ''}{v.element}>"
            params = _param_types(funcs[case.body])
            if any(params[k] != slot for k in operands):
                continue
            # Every other reader runs at the same step, before the update.
            others = [r for r in readers.get(id(carrier), []) if r.consumer is not v]
            if any(r.entries != own_step for r in others):
                continue
            mine = emission_key(node, depth)
            if any(
                id(r.consumer) not in nodes or emission_key(nodes[id(r.consumer)], depth) >= mine
                for r in others
            ):
                continue
            found[id(v)] = InPlace(carrier, v, operands, copy, *_donor(c, copy, readers, funcs))
            break
    return found


def _donor(carrier: Node, copy_case: int, readers: dict, funcs: dict) -> tuple:
    """(input, case) when the carrier's only other case copies a whole
    input of its own shape and type that nothing else reads: the store
    can be the input's buffer. The runtime then hands the program the
    caller's array when the caller donates it, and a copy otherwise
    (pdg.runtime.cpu.Entry): the compiled code writes into it either way."""
    if len(carrier.cases) != 2:
        return None, None
    k = 1 - copy_case
    case = carrier.cases[k]
    if case.body is None or len(case.reads) != 1:
        return None, None
    (read,) = case.reads
    donor, v = read.producer, carrier.value
    if donor.kind != "input" or donor.domain or read.entries:
        return None, None
    if (donor.shape, donor.element) != (v.shape, v.element):
        return None, None
    if len(readers.get(id(donor), [])) != 1 or not _returns_argument(funcs[case.body], 0):
        return None, None
    return donor, k
