"""Scheduling: a loop nest over the sequential dims, and an order of nodes
inside it that respects every dependence.

Values without a sequential dim run `before` the loops, or `after` them if
they read a loop value, each whole and after the values it reads. Inside
the loops, a read at the same step
(distance 0 along every loop dim) orders producer before consumer; values
at the same depth (`stage`) of that order do not depend on each other in a
step and may overlap."""

from __future__ import annotations

from dataclasses import dataclass

from .graph import Graph, Value
from .polyhedral import Polyhedral
from .roles import dim_roles


@dataclass
class Slot:
    value: Value
    phase: str  # before | loop | after
    loops: list[str]
    order: int
    stage: int

    def attribute(self) -> str:
        loops = ", ".join(f'"{d}"' for d in self.loops)
        return (
            f'{{phase = "{self.phase}", loops = [{loops}], order = {self.order} : i64, '
            f"stage = {self.stage} : i64}}"
        )


def schedule(graph: Graph, poly: Polyhedral | None = None) -> list[Slot]:
    poly = poly or Polyhedral(graph)
    roles = dim_roles(graph, poly)
    sequential = [d for d in graph.dims if roles[d] == "sequential"]
    loops_of = {id(v): [d for d in v.domain if d in sequential] for v in graph.values}

    # Phase of values outside the loops.
    phase = {}
    for v in graph.values:
        phase[id(v)] = "loop" if loops_of[id(v)] else "before"
    changed = True
    while changed:
        changed = False
        for v in graph.values:
            if phase[id(v)] != "before":
                continue
            if any(phase[id(r.producer)] in ("loop", "after") for r in v.reads):
                phase[id(v)] = "after"
                changed = True

    # Same-step edges among loop values: producer first.
    deps: dict[int, set[int]] = {id(v): set() for v in graph.values}
    for read in graph.reads:
        c, p = read.consumer, read.producer
        if phase[id(c)] != phase[id(p)] or c is p:
            continue
        if phase[id(c)] != "loop":  # outside the loops a producer is computed whole first
            deps[id(c)].add(id(p))
            continue
        # The producer's current step is read (distance 0 along every loop
        # dim, among others for a window ending at t): it comes first.
        current = True
        for d in loops_of[id(c)]:
            deltas = poly.distances(read, d)
            if deltas is None:
                continue
            low = poly.lower_bound(deltas)
            if low is None or low > 0:
                current = False
        if current:
            deps[id(c)].add(id(p))

    stage: dict[int, int] = {}
    order: list[Value] = []
    for group in ("before", "loop", "after"):
        pending = [v for v in graph.values if phase[id(v)] == group]
        placed: set[int] = set()
        while pending:
            progress = False
            for v in list(pending):
                inner = {p for p in deps[id(v)] if phase[p] == group}
                if inner <= placed:
                    stage[id(v)] = 1 + max((stage[p] for p in inner), default=-1)
                    order.append(v)
                    placed.add(id(v))
                    pending.remove(v)
                    progress = True
            if not progress:  # a same-step cycle: the verifier rejects these
                for v in pending:
                    stage[id(v)] = 0
                    order.append(v)
                break
    return [Slot(v, phase[id(v)], loops_of[id(v)], i, stage[id(v)]) for i, v in enumerate(order)]
