"""Loop nests: which values run together in one loop over a sequential dim,
in which direction, and in what order the nests and the values computed
whole between them run.

Groups are numbered in execution order. Even groups hold values without a
sequential dim, each computed whole; odd groups are loop nests over one
sequential dim, stepping forward, or backward when its recurrences read
later steps (the gradient of a recurrence: dx[t] from dx[t + 1]). Values
over a sequential dim always run in a nest (a dynamic dim's extent is known
only step by step, and a nest keeps just the steps its reads need).

Cycles of values (strongly connected components) are placed producers
first, each in the earliest group its reads allow: a read from an earlier
group sees a finished value; a read inside a nest must look at the current
step or one already done in the nest's direction. A nest's direction is set
by the first recurrence placed in it; a read that does not fit opens the
next nest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cycles import components
from .graph import Graph, Read, Value
from .polyhedral import Polyhedral
from .roles import dim_roles


@dataclass
class Nest:
    dim: str
    reverse: bool | None = None  # None until a recurrence fixes it (forward then)
    reads: list = field(default_factory=list)  # reads between values of the nest


@dataclass
class Grouping:
    group: dict[int, int]  # id(value) -> group number (inputs: -1)
    nests: dict[int, Nest]  # odd group number -> its loop

    def of(self, v: Value) -> int:
        return self.group[id(v)]

    def reverse(self, v: Value) -> bool:
        nest = self.nests.get(self.of(v))
        return bool(nest and nest.reverse)


def loop_groups(graph: Graph, poly: Polyhedral | None = None) -> Grouping:
    poly = poly or Polyhedral(graph)
    if poly.groups is not None:
        return poly.groups
    roles = dim_roles(graph, poly)
    sequential = [d for d in graph.dims if roles[d] == "sequential"]
    comp = components(graph)
    members: dict[int, list[Value]] = {}
    for v in graph.values:
        members.setdefault(comp[id(v)], []).append(v)

    group: dict[int, int] = {}
    nests: dict[int, Nest] = {}
    for c in _topological(graph, comp, members):
        vals = members[c]
        if all(v.kind == "input" for v in vals):
            for v in vals:
                group[id(v)] = -1
            continue
        inside = {id(v) for v in vals}
        reads = [r for v in vals for r in v.reads]
        own = [r for r in reads if id(r.producer) in inside]
        outer = [r for r in reads if id(r.producer) not in inside and r.producer.kind != "input"]
        dims = [d for d in sequential if all(d in v.domain for v in vals)]
        recurrence = _recurrence(poly, own, sequential)
        if not dims:  # computed whole: after every group it reads
            g = max((_after(group[id(r.producer)]) for r in outer), default=0)
            g += g % 2  # the next even group
        else:
            dim = recurrence[0] if recurrence else dims[0]
            want = recurrence[1] if recurrence else None
            g = max((_earliest(group, nests, r, dim, poly) for r in outer), default=1)
            g += 1 - g % 2  # an odd group
            while True:
                nest = nests.get(g)
                joined = [r for r in outer if group[id(r.producer)] == g] + own
                if nest is None or _fits(nest, dim, want, joined, poly):
                    break
                g += 2
            nest = nests.setdefault(g, Nest(dim))
            nest.reads += joined
            if want is not None:
                nest.reverse = want
        for v in vals:
            group[id(v)] = g
    result = Grouping(group, nests)
    poly.groups = result
    return result


def _recurrence(poly, own: list[Read], sequential: list[str]) -> tuple[str, bool] | None:
    """(dim, runs backward) of a cycle's reads, outermost moving dim first."""
    for d in sequential:
        back = ahead = False
        for r in own:
            deltas = poly.distances(r, d)
            if deltas is None:
                continue
            low, high = poly.lower_bound(deltas), poly.upper_bound(deltas)
            if low is not None and high is not None and low == high == 0:
                continue
            if low is not None and low >= 0:
                back = True
            elif high is not None and high <= 0:
                ahead = True
            else:
                back = ahead = True
        if back or ahead:
            # Mixed directions cannot run step by step; legality reports it.
            return d, ahead and not back
    return None


def _after(g: int) -> int:
    """The first group that may read group g's values whole."""
    return g + 1 if g % 2 else g


def _earliest(group, nests, r: Read, dim: str, poly) -> int:
    """The earliest group a consumer over `dim` may join given read r."""
    g = group[id(r.producer)]
    if g % 2 == 0:
        return g + 1
    nest = nests[g]
    if nest.dim == dim and _in_step(poly, r, dim, bool(nest.reverse)):
        return g
    return g + 2


def _in_step(poly, r: Read, dim: str, reverse: bool) -> bool:
    """Whether r reads steps at or before the current one in the direction."""
    deltas = poly.distances(r, dim)
    if deltas is None:
        return False
    if reverse:
        high = poly.upper_bound(deltas)
        return high is not None and high <= 0
    low = poly.lower_bound(deltas)
    return low is not None and low >= 0


def _fits(nest: Nest, dim: str, want: bool | None, joined: list[Read], poly) -> bool:
    """Whether a cycle can join `nest`: the same dim, the same direction,
    and every read inside the nest (old and new) looking at steps already
    done in that direction."""
    if nest.dim != dim:
        return False
    if want is not None and nest.reverse is not None and want != nest.reverse:
        return False
    direction = nest.reverse if nest.reverse is not None else bool(want)
    return all(
        r.producer is r.consumer or _in_step(poly, r, dim, direction) for r in nest.reads + joined
    )


def _topological(graph: Graph, comp: dict[int, int], members: dict) -> list[int]:
    """Components, producers first (Kahn's algorithm on the condensation)."""
    after: dict[int, set[int]] = {c: set() for c in members}
    count: dict[int, int] = dict.fromkeys(members, 0)
    for r in graph.reads:
        p, c = comp[id(r.producer)], comp[id(r.consumer)]
        if p != c and c not in after[p]:
            after[p].add(c)
            count[c] += 1
    order = []
    ready = [c for c in members if count[c] == 0]
    while ready:
        c = ready.pop(0)
        order.append(c)
        for n in sorted(after[c]):
            count[n] -= 1
            if count[n] == 0:
                ready.append(n)
    return order
