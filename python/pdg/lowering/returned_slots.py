"""Outputs that are the last step of a one-slot store: returned in place
(part of the Driver).

A training program outputs its final weights and optimizer state as
`final.w = update[I - 1]`: a node that copies the last iteration's slot of
the update into a store of its own. The update's store is a point store
along the iterations (one slot, written at every step), so after the last
step that slot already holds what the output copies. Returning the slot
itself (a view without the unit dims) saves the copy and, for a model,
three stores of the parameters' size that were allocated for the whole run.

An output qualifies when its node's only case reads one value of the same
point shape and yields it unchanged, nothing reads the output, and the
value it reads is a node whose store keeps a single slot (every dim of its
domain a point dim: all its reads after the nest see the last step). The
storage plan already guarantees that a consumer outside the nest reading a
point store reads the last step; the copy read the same slot.
"""

from __future__ import annotations

from mlir import ir

from pdg.analysis.graph import Graph, Value

from .buffers import Buffer


def _yields_its_operand(v: Value) -> bool:
    """The node's body is `pdg.yield %arg0` and nothing else."""
    region = v.op.regions[0]
    blocks = list(region.blocks)
    if len(blocks) != 1 or len(blocks[0].arguments) != 1:
        return False
    ops = list(blocks[0].operations)
    if len(ops) != 1 or ops[0].name != "pdg.yield" or len(ops[0].operands) != 1:
        return False
    operand = ops[0].operands[0]
    return isinstance(operand, ir.BlockArgument) and operand.arg_number == 0


def returned_slots(graph: Graph, buffers: dict[int, Buffer]) -> dict[int, Value]:
    """id(output value) -> the value whose one-slot store it returns."""
    read = {id(r.producer) for r in graph.reads}
    found: dict[int, Value] = {}
    taken: set[int] = set()
    for _, out in graph.outputs:
        if out.kind != "node" or id(out) in read or id(out) in found:
            continue
        if len(out.conditions) > 1 or len(out.reads) != 1 or out.domain:
            continue
        (r,) = out.reads
        p = r.producer
        slot = buffers.get(id(p))
        if p.kind != "node" or id(p) in taken or slot is None or slot.kind != "point":
            continue
        if not p.domain or any(mode != "zero" for mode, _ in slot.modes):
            continue
        if p.shape != out.shape or p.element != out.element or None in p.shape:
            continue
        if not _yields_its_operand(out):
            continue
        found[id(out)] = p
        taken.add(id(p))
    return found


def slot_view(slot: Buffer, out: Buffer) -> str:
    """`memref.collapse_shape` text turning the one-slot store `slot`
    (unit dims, then the point) into the output's type (the point), with
    `%SLOT` for its SSA name."""
    groups = slot_groups(len(slot.modes), len(out.type.shape))
    return f"memref.collapse_shape %SLOT {groups} : {slot.type} into {out.type}"


def slot_groups(units: int, rank: int) -> str:
    """The reassociation between a one-slot store (`units` unit dims, then
    a point of `rank` dims) and its point: the unit dims join the point's
    first dim (for memref.collapse_shape and memref.expand_shape)."""
    if rank == 0:
        return "[]"
    groups = [list(range(units + 1))] + [[units + k] for k in range(1, rank)]
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
