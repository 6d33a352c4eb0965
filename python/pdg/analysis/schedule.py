"""Scheduling: loop nests over the sequential dims (groups.py), and an
order of nodes inside each that respects every dependence.

Values without a sequential dim run `before` the first nest, or `after` one
if they read a nest's values, each whole and after the values it reads. In a
nest, a read of the current step orders producer before consumer; values at
the same depth (`stage`) of that order do not depend on each other in a
step and may overlap. The `group` numbers the nests (odd) and the whole
computations between them (even) in execution order; inside a nest whose
members have nests of their own, `nest` gives the group at each level
below (groups.py); `loops` are the dims of the nests a value runs in,
outermost first, and `reverse` those of them that step backward."""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Graph, Value
from .groups import loop_groups
from .polyhedral import Polyhedral


@dataclass
class Slot:
    value: Value
    phase: str  # before | loop | after
    loops: list[str]  # the dims of the nests it runs in, outermost first
    order: int
    stage: int
    path: tuple[int, ...] = (0,)  # its group at each level of nesting
    reverse: list[str] = field(default_factory=list)  # its nests that step backward

    def attribute(self) -> str:
        loops = ", ".join(f'"{d}"' for d in self.loops)
        extra = ""
        if len(self.path) > 1:
            extra += f", nest = [{', '.join(f'{g} : i64' for g in self.path[1:])}]"
        if self.reverse:
            reverse = ", ".join(f'"{d}"' for d in self.reverse)
            extra += f", reverse = [{reverse}]"
        return (
            f'{{group = {self.path[0]} : i64, phase = "{self.phase}", loops = [{loops}], '
            f"order = {self.order} : i64, stage = {self.stage} : i64{extra}}}"
        )


def schedule(graph: Graph, poly: Polyhedral | None = None) -> list[Slot]:
    poly = poly or Polyhedral(graph)
    groups = loop_groups(graph, poly)
    first_nest = min((n[0] for n in groups.nests), default=None)

    def phase(v) -> str:
        g = groups.of(v)
        if g > 0 and g % 2:
            return "loop"
        return "before" if first_nest is None or g < first_nest else "after"

    # Within a group at the innermost level: a producer comes first when it
    # is computed whole there, or when the read looks at the current step of
    # every nest around both (not an earlier one, which the loops' order
    # gives).
    deps: dict[int, set[int]] = {id(v): set() for v in graph.values}
    for read in graph.reads:
        c, p = read.consumer, read.producer
        if groups.path(c) != groups.path(p) or c is p or groups.of(c) < 0:
            continue
        if _same_step(poly, read, [groups.nests[n] for n in groups.enclosing(c)]):
            deps[id(c)].add(id(p))

    stage: dict[int, int] = {}
    order: list[Value] = []
    for path in sorted({groups.path(v) for v in graph.values}):
        pending = [v for v in graph.values if groups.path(v) == path]
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
            groups.loops(v),
            i,
            stage[id(v)],
            tuple(max(g, 0) for g in groups.path(v)),
            groups.reversed_loops(v),
        )
        for i, v in enumerate(order)
    ]


def _same_step(poly: Polyhedral, read, nests: list) -> bool:
    """Whether `read` may look at the step its consumer runs at, in each of
    the nests (outermost first) both run in; a read of an earlier step of
    any of them is ordered by that loop."""
    for nest in nests:
        deltas = poly.distances(read, nest.dim)
        if deltas is None:
            continue
        if nest.reverse:
            high = poly.upper_bound(deltas)
            if high is not None and high < 0:
                return False
        else:
            low = poly.lower_bound(deltas)
            if low is not None and low > 0:
                return False
    return True
