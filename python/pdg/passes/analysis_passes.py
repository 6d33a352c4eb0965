"""Passes built on the isl analyses (pdg.analysis): legality checking,
storage planning and scheduling. Each reads every pdg.graph of the module
and annotates its value ops; problems are reported at their location."""

from __future__ import annotations

from mlir import ir

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
    "footprint; attach it as pdg.store",
)
def plan_storage_pass(module: ir.Module) -> None:
    _annotate(module, "pdg.store", plan_storage)


@register(
    "pdg-schedule",
    "Order nodes in loop nests over the sequential dims; attach pdg.schedule (group: "
    "the nest or whole computation in execution order, reverse for a backward nest, "
    "phase, loops, order, and a stage shared by nodes that may overlap)",
)
def schedule_pass(module: ir.Module) -> None:
    _annotate(module, "pdg.schedule", schedule)
