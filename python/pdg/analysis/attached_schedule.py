"""The schedule attached to a graph's value ops by pdg-schedule (the
`pdg.schedule` attribute, whose fields the dialect verifies), read back as
schedule.Slot per value: what the lowering runs, and what the storage plan
may rely on when it is there."""

from __future__ import annotations

from mlir import ir

from .graph import Graph, Value
from .schedule import Slot


def attached_slots(graph: Graph) -> dict[int, Slot] | None:
    """Each value's attached slot by id(value); None unless every value
    other than an input has one (a graph not scheduled yet)."""
    slots = {}
    for v in graph.values:
        if "pdg.schedule" in v.op.attributes:
            slots[id(v)] = slot_of(v)
        elif v.kind != "input":
            return None
    return slots


def slot_of(v: Value) -> Slot:
    slot = ir.DictAttr(v.op.attributes["pdg.schedule"])
    phase = ir.StringAttr(slot["phase"]).value
    # Schedules written before nests were numbered: one nest, group 1.
    group = (
        ir.IntegerAttr(slot["group"]).value
        if "group" in slot
        else {"before": 0, "loop": 1, "after": 2}[phase]
    )
    inner = [ir.IntegerAttr(g).value for g in ir.ArrayAttr(slot["nest"])] if "nest" in slot else []
    loops = [ir.StringAttr(d).value for d in ir.ArrayAttr(slot["loops"])]
    reverse: list[str] = []
    if "reverse" in slot:
        flag = slot["reverse"]
        # A unit `reverse` (schedules of one level): the nest steps backward.
        reverse = (
            [ir.StringAttr(d).value for d in ir.ArrayAttr(flag)]
            if isinstance(flag, ir.ArrayAttr)
            else loops[-1:]
        )
    return Slot(
        v,
        phase,
        loops,
        ir.IntegerAttr(slot["order"]).value,
        ir.IntegerAttr(slot["stage"]).value,
        (group, *inner),
        reverse,
    )
