"""Scheduling: loop nests over the sequential dims (groups.py), and an
order of nodes inside each that respects every dependence.

Values without a sequential dim run `before` the first nest, or `after` one
if they read a nest's values, each whole and after the values it reads. In a
nest, a read of the current step orders producer before consumer; values at
the same depth (`stage`) of that order do not depend on each other in a
step and may overlap. The `group` numbers the nests (odd) and the whole
computations between them (even) in execution order; `reverse` marks a nest
that steps backward."""

from __future__ import annotations

from dataclasses import dataclass

from .graph import Graph, Value
from .groups import loop_groups
from .polyhedral import Polyhedral


@dataclass
class Slot:
    value: Value
    phase: str  # before | loop | after
    loops: list[str]
    order: int
    stage: int
    group: int = 0  # the loop nest (odd) or whole computation (even) it runs in
    reverse: bool = False  # its nest steps backward

    def attribute(self) -> str:
        loops = ", ".join(f'"{d}"' for d in self.loops)
        extra = ", reverse" if self.reverse else ""
        return (
            f'{{group = {self.group} : i64, phase = "{self.phase}", loops = [{loops}], '
            f"order = {self.order} : i64, stage = {self.stage} : i64{extra}}}"
        )


def schedule(graph: Graph, poly: Polyhedral | None = None) -> list[Slot]:
    poly = poly or Polyhedral(graph)
    groups = loop_groups(graph, poly)
    first_nest = min(groups.nests, default=None)

    def phase(v) -> str:
        g = groups.of(v)
        if g > 0 and g % 2:
            return "loop"
        return "before" if first_nest is None or g < first_nest else "after"

    def loops(v) -> list[str]:
        g = groups.of(v)
        return [groups.nests[g].dim] if g > 0 and g % 2 else []

    # Within a group: a producer comes first when its current step is read
    # (in a nest), or always (computed whole).
    deps: dict[int, set[int]] = {id(v): set() for v in graph.values}
    for read in graph.reads:
        c, p = read.consumer, read.producer
        if groups.of(c) != groups.of(p) or c is p:
            continue
        g = groups.of(c)
        if g % 2 == 0 or g < 0:
            deps[id(c)].add(id(p))
            continue
        deltas = poly.distances(read, groups.nests[g].dim)
        if deltas is None:
            continue
        if groups.nests[g].reverse:
            high = poly.upper_bound(deltas)
            current = high is None or high >= 0
        else:
            low = poly.lower_bound(deltas)
            current = low is None or low <= 0
        if current:
            deps[id(c)].add(id(p))

    stage: dict[int, int] = {}
    order: list[Value] = []
    for g in sorted({groups.of(v) for v in graph.values}):
        pending = [v for v in graph.values if groups.of(v) == g]
        placed: set[int] = set()
        while pending:
            progress = False
            for v in list(pending):
                inner = deps[id(v)]
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
    return [
        Slot(
            v,
            "before" if v.kind == "input" else phase(v),
            loops(v),
            i,
            stage[id(v)],
            max(groups.of(v), 0),
            groups.reverse(v),
        )
        for i, v in enumerate(order)
    ]
