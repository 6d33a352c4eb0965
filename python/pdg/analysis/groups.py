"""Loop nests: which values run together in one loop over a sequential dim,
in which direction, and in what order the nests and the values computed
whole between them run; and inside a nest, the same again one level down.

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

Nests inside nests: the members of a nest that still have a sequential dim
of their own (a generation loop over t inside a training loop over i) are
grouped again, the same way, with the nest's dim fixed. At that level the
reads the nest carries (from an earlier step of it: the weights of the
iteration before) are satisfied by its order and leave the graph, so one
iteration's values split into their own nests and whole computations. A
value's `path` is its group number at each level, outermost first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cycles import components
from .graph import Graph, Read, Value
from .polyhedral import Polyhedral
from .roles import dim_roles

Path = tuple[int, ...]


@dataclass
class Nest:
    dim: str
    reverse: bool | None = None  # None until a recurrence fixes it (forward then)
    reads: list = field(default_factory=list)  # reads between values of the nest
    # The direction every read in `reads` was last found in step for
    # (None: not checked), so that a cycle joining in that direction
    # checks only its own reads.
    checked: bool | None = None


@dataclass
class Grouping:
    paths: dict[int, Path]  # id(value) -> group number per level (inputs: (-1,))
    nests: dict[Path, Nest]  # path of a nest (its last group odd) -> its loop

    def of(self, v: Value) -> int:
        """The group at the outermost level."""
        return self.paths[id(v)][0]

    def path(self, v: Value) -> Path:
        return self.paths[id(v)]

    def enclosing(self, v: Value) -> list[Path]:
        """The nests v runs in, outermost first."""
        p = self.paths[id(v)]
        return [p[: k + 1] for k in range(len(p)) if p[: k + 1] in self.nests]

    def loops(self, v: Value) -> list[str]:
        return [self.nests[n].dim for n in self.enclosing(v)]

    def reversed_loops(self, v: Value) -> list[str]:
        """The dims of v's nests that step backward."""
        return [self.nests[n].dim for n in self.enclosing(v) if self.nests[n].reverse]

    def runs_inside(self, consumer: Value, v: Value, dim: str) -> bool:
        """Whether `consumer` runs inside v's nest over `dim` (and so sees
        v's steps as they come, not after the nest)."""
        for n in self.enclosing(v):
            if self.nests[n].dim == dim:
                return self.paths[id(consumer)][: len(n)] == n
        return False


def loop_groups(graph: Graph, poly: Polyhedral | None = None) -> Grouping:
    poly = poly or Polyhedral(graph)
    if poly.groups is not None:
        return poly.groups
    roles = dim_roles(graph, poly)
    sequential = [d for d in graph.dims if roles[d] == "sequential"]
    loops = {id(v): _loop_dims(graph, sequential, v) for v in graph.values}
    paths: dict[int, Path] = {}
    nests: dict[Path, Nest] = {}

    def place(values: list[Value], reads: list[Read], fixed: list[str], prefix: Path) -> None:
        free = [d for d in sequential if d not in fixed]
        group, level = _level(graph, poly, values, reads, free, loops)
        for v in values:
            paths[id(v)] = prefix + (group[id(v)],)
        for g, nest in sorted(level.items()):
            key = prefix + (g,)
            nests[key] = nest
            inner = [v for v in values if group[id(v)] == g]
            left = [d for d in free if d != nest.dim]
            if not any(d in loops[id(v)] for v in inner for d in left):
                continue  # one level: every member runs at each step
            ids = {id(v) for v in inner}
            kept = [
                r
                for r in reads
                if id(r.producer) in ids and id(r.consumer) in ids and not _carried(poly, r, nest)
            ]
            place(inner, kept, [*fixed, nest.dim], key)

    place(list(graph.values), list(graph.reads), [], ())
    result = Grouping(paths, nests)
    poly.groups = result
    return result


def _loop_dims(graph: Graph, sequential: list[str], v: Value) -> set[str]:
    """The sequential dims whose loops v runs in: its own, and for a
    dynamic dim those its sequences end along (a position over [t] alone
    runs inside the training loop over i where t's sequences run)."""
    dims = {d for d in v.domain if d in sequential}
    for d in v.domain:
        until = graph.dims[d].until
        if graph.dims[d].kind == "dynamic" and until is not None:
            dims |= {e for e in graph.value(until).domain if e in sequential}
    return dims


def _level(graph: Graph, poly: Polyhedral, values, reads: list[Read], sequential, loops):
    """Groups of `values` at one level (id -> group number) and the nests
    among them (odd group -> Nest), given the `reads` between them, the
    sequential dims not yet fixed by an enclosing nest and each value's
    loop dims.

    A dynamic dim's extent is known only in the nest that computes its
    `until` value: a nest over it placed before that one (a position over
    t that nothing in the generation loop fuses, read whole by a pass over
    the finished sequences) could not tell when to stop. Such values are
    placed again, no earlier than the `until` value's nest."""
    here = {id(v) for v in values}
    floor: dict[str, int] = {}
    for _ in range(len(sequential) + 1):
        group, nests = _place(graph, poly, values, reads, sequential, loops, floor)
        late = {}
        for d in sequential:
            until = graph.dims[d].until
            if graph.dims[d].kind != "dynamic" or until is None:
                continue
            u = graph.value(until)
            if id(u) not in here or group[id(u)] % 2 == 0:
                continue
            if any(n.dim == d and g < group[id(u)] for g, n in nests.items()):
                late[d] = group[id(u)]
        if not late or all(floor.get(d) == g for d, g in late.items()):
            return group, nests
        floor.update(late)
    return group, nests


def _place(graph: Graph, poly: Polyhedral, values, reads, sequential, loops, floor):
    """_level's placement, with no nest over a dim in `floor` before the
    group it names."""
    comp = components(graph, reads)
    members: dict[int, list[Value]] = {}
    for v in values:
        members.setdefault(comp[id(v)], []).append(v)
    here = {id(v) for v in values}
    # Each value's reads (by position in `reads`), so that a component
    # finds its own without a scan of every read: one scan per component
    # made this level quadratic (73% of compiling a 12-layer GRPO program).
    reads_of: dict[int, list[int]] = {}
    for k, r in enumerate(reads):
        reads_of.setdefault(id(r.consumer), []).append(k)

    group: dict[int, int] = {}
    nests: dict[int, Nest] = {}
    for c in _topological(reads, comp, members):
        vals = members[c]
        if all(v.kind == "input" for v in vals):
            for v in vals:
                group[id(v)] = -1
            continue
        inside = {id(v) for v in vals}
        mine = [reads[k] for k in sorted(k for v in vals for k in reads_of.get(id(v), ()))]
        own = [r for r in mine if id(r.producer) in inside]
        outer = [
            r
            for r in mine
            if id(r.producer) in here
            and id(r.producer) not in inside
            and r.producer.kind != "input"
        ]
        dims = [d for d in sequential if all(d in loops[id(v)] for v in vals)]
        recurrence = _recurrence(poly, own, sequential)
        if not dims:  # computed whole: after every group it reads
            g = max((_after(group[id(r.producer)]) for r in outer), default=0)
            g += g % 2  # the next even group
        else:
            dim = recurrence[0] if recurrence else dims[0]
            want = recurrence[1] if recurrence else None
            g = max((_earliest(group, nests, r, dim, poly) for r in outer), default=1)
            g = max(g, floor.get(dim, 0))
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
    return group, nests


def _carried(poly: Polyhedral, r: Read, nest: Nest) -> bool:
    """Whether every point of r reads a step the nest has already done: the
    nest's order satisfies it, so it does not order the nest's members
    within a step."""
    deltas = poly.distances(r, nest.dim)
    if deltas is None:
        return False
    if nest.reverse:
        high = poly.upper_bound(deltas)
        return high is not None and high <= -1
    low = poly.lower_bound(deltas)
    return low is not None and low >= 1


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
    """Whether r reads steps at or before the current one in the direction
    (a producer without the dim, computed in the nest, at every step)."""
    if dim not in r.producer.domain:
        return True
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
    todo = joined if nest.checked == direction else nest.reads + joined
    if not all(r.producer is r.consumer or _in_step(poly, r, dim, direction) for r in todo):
        return False
    nest.checked = direction  # the caller joins `joined` to the nest
    return True


def _topological(reads: list[Read], comp: dict[int, int], members: dict) -> list[int]:
    """Components, producers first (Kahn's algorithm on the condensation)."""
    after: dict[int, set[int]] = {c: set() for c in members}
    count: dict[int, int] = dict.fromkeys(members, 0)
    for r in reads:
        p, c = comp[id(r.producer)], comp[id(r.consumer)]
        if p not in members or c not in members:
            continue
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
