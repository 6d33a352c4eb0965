"""Passes built on the isl analyses (pdg.analysis): legality checking,
storage planning and scheduling. Each reads every pdg.graph of the module
and annotates its value ops; problems are reported at their location."""

from __future__ import annotations

from mlir import ir

from pdg.analysis.attached_schedule import attached_slots
from pdg.analysis.graph import Graph, read_graph
from pdg.analysis.legality import check_legality
from pdg.analysis.polyhedral import Polyhedral
from pdg.analysis.schedule import schedule
from pdg.analysis.storage import plan_storage

from .registry import PassError, register


def graphs(module: ir.Module) -> list[Graph]:
    return [read_graph(op) for op in module.body.operations if op.operation.name == "pdg.graph"]


def _check(graph: Graph, poly: Polyhedral) -> None:
    problems = check_legality(graph, poly)
    for p in problems:
        p.location.emit_error(p.message)
    if problems:
        raise PassError(f"{len(problems)} illegal read(s) in @{graph.name}", reported=True)


@register(
    "pdg-check-legality",
    "Check with isl that every read stays in its producer's domain and no cycle "
    "reads the future of a sequential dim",
)
def check_legality_pass(module: ir.Module) -> None:
    """Proves with isl that every read stays in its producer's domain and
    that every cycle reads one way along a sequential dim (back, or ahead
    along a static or launch dim). Each illegal read is reported at its
    access. The storage and schedule passes run this check first."""
    for graph in graphs(module):
        _check(graph, Polyhedral(graph))


def _annotate(module: ir.Module, attribute: str, compute) -> None:
    """Checks each graph, then sets `attribute` on each value op from
    `compute(graph, poly)`: items with `.value` and `.attribute()`."""
    for graph in graphs(module):
        poly = Polyhedral(graph)
        _check(graph, poly)
        with module.context:
            for item in compute(graph, poly):
                item.value.op.attributes[attribute] = ir.Attribute.parse(item.attribute())


@register(
    "pdg-plan-storage",
    "Choose each value's store (point, window, block, full, growable) from its "
    "footprint (and the attached schedule, if any); attach it as pdg.store",
)
def plan_storage_pass(module: ir.Module) -> None:
    """Gives each value a store from its footprint (which points are read
    while it lives): `point`, `window` (a circular buffer of w steps),
    `block`, `full` or `growable` (sized by the symbols), or `partial` (a
    value read only by a sum over its parallel dims: one partial sum per
    chunk of at most 16 fixed chunks of its points). The store is attached
    as `#pdg.store<window, [B, 64]>`; `pdg-opt --pdg-memory-report` prints
    each store and the peak as formulas of the symbols. Run after
    pdg-schedule, it plans by the attached schedule: a window whose oldest
    step is read earlier in the step than the value is written keeps one
    step fewer (a point store instead of a window of 2)."""
    _annotate(
        module,
        "pdg.store",
        lambda graph, poly: plan_storage(graph, poly, attached_slots(graph)),
    )


@register(
    "pdg-schedule",
    "Order nodes in loop nests over the sequential dims; attach pdg.schedule (group: "
    "the nest or whole computation in execution order, reverse for a backward nest, "
    "phase, loops, order, and a stage shared by nodes that may overlap)",
)
def schedule_pass(module: ir.Module) -> None:
    """Builds loop nests over the sequential dims (forward, or backward for
    a gradient's recurrence; a value read after its nest is kept whole),
    computes values without them whole between nests, and orders the nodes
    of each step; nodes at the same `stage` may overlap. A nest's members
    with a sequential dim of their own are grouped again inside it (`nest =
    [..]`: a generation loop inside a training loop), the reads it carries
    from earlier steps set aside."""
    _annotate(module, "pdg.schedule", schedule)
