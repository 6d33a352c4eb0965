"""What the lowering needs to know about a planned, scheduled, outlined
pdg.graph: per node its schedule slot, its cases (outlined body, condition,
reads with their affine accesses) and its store."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from pdg import _ext
from pdg.analysis.attached_schedule import slot_of
from pdg.analysis.graph import Graph, Read, Value, read_graph
from pdg.analysis.memory import stores_of
from pdg.analysis.polyhedral import Polyhedral
from pdg.analysis.roles import dim_roles
from pdg.analysis.storage import Store
from pdg.passes.registry import PassError


@dataclass
class Case:
    body: str | None  # the outlined func (None for a udf)
    constraints: list[tuple[ir.AffineExpr, bool]]  # (expr, is equality): expr >= 0 / == 0
    reads: list[Read]  # in operand order; `.affine` has the entries as AffineExprs
    udf: str | None = None  # the callee, for a udf
    collective: dict | None = None  # for a collective: analysis.graph.Value.collective


@dataclass
class Node:
    value: Value
    order: int
    cases: list[Case] = field(default_factory=list)
    # Its group at each level of nesting (groups.py): a loop nest (odd) or
    # a whole computation (even), in execution order.
    path: tuple[int, ...] = (0,)
    loops: list[str] = field(default_factory=list)  # the dims of its nests, outermost first
    reverse: list[str] = field(default_factory=list)  # those of them that step backward

    @property
    def group(self) -> int:
        return self.path[0]

    @property
    def name(self) -> str:
        return self.value.name


@dataclass
class LoweringModel:
    graph: Graph
    roles: dict[str, str]
    stores: dict[int, Store]  # by id(value)
    nodes: list[Node]  # in schedule order

    def store(self, v: Value) -> Store:
        return self.stores[id(v)]


def read_model(graph_op: ir.Operation) -> LoweringModel:
    graph = read_graph(graph_op)
    poly = Polyhedral(graph)
    roles = dim_roles(graph, poly)
    missing = [
        v
        for v in graph.values
        if "pdg.store" not in v.op.attributes
        or (v.kind != "input" and "pdg.schedule" not in v.op.attributes)
    ]
    if missing:
        raise PassError(
            f"value '{missing[0].name}' has no pdg.store or pdg.schedule; run "
            "pdg-plan-storage and pdg-schedule before lowering",
            missing[0].op.location,
        )
    stores = {id(s.value): s for s in stores_of(graph)}
    nodes = []
    for v in graph.values:
        if v.kind == "input":
            continue
        slot = slot_of(v)
        node = Node(v, slot.order, path=slot.path, loops=slot.loops, reverse=slot.reverse)
        if v.kind == "udf":
            # One case: a call through the runtime's table of host callbacks.
            callee = ir.StringAttr(v.op.attributes["callee"]).value
            node.cases = [Case(None, [], list(v.reads), callee)]
            nodes.append(node)
            continue
        if v.kind == "collective":
            # One case: a call of the runtime's MPI layer (runtime/lib/mpi.c).
            node.cases = [Case(None, [], list(v.reads), collective=v.collective)]
            nodes.append(node)
            continue
        if "pdg.bodies" not in v.op.attributes:
            raise PassError(
                f"node '{v.name}' has no outlined bodies; run pdg-outline-bodies first",
                v.op.location,
            )
        node.cases = _cases(v)
        nodes.append(node)
    nodes.sort(key=lambda n: n.order)
    return LoweringModel(graph, roles, stores, nodes)


def _cases(v: Value) -> list[Case]:
    attrs = v.op.attributes
    bodies = [ir.FlatSymbolRefAttr(b).value for b in ir.ArrayAttr(attrs["pdg.bodies"])]
    conditions = list(ir.ArrayAttr(attrs["conditions"]))
    cases = []
    for k in range(len(v.op.regions)):
        cmap, eqs = _ext.integer_set_parts(conditions[k])
        cases.append(
            Case(
                bodies[k],
                list(zip(cmap.results, eqs, strict=True)),
                [r for r in v.reads if r.case == k],
            )
        )
    return cases
