"""Storage planning: each value's store from its footprint.

Along a parallel dim a store keeps every coordinate (the bound, e.g. B).
Along a sequential dim, a value read after its loop nest (groups.py) keeps
every step; otherwise it keeps what later reads in the nest still need: the largest
distance back any read looks, from isl (`Polyhedral.upper_bound`):

    0         -> point     (only the latest step)
    w - 1     -> window    (a circular buffer of w; `block` when the reads
                            are block-shaped, e.g. (t // s) * s : t + 1)
    unbounded -> full      (every step; `growable` when the bound is
                            discovered while running)

A read from a consumer that lacks the dim needs every step (x[b, 0 : T]
after the loop: full) unless it reads only the last few (acc[b, T - 1]: a
window of those). A program output needs every step. Inputs are given by
the caller. A value read only by a sum over its parallel dims keeps a
partial sum per chunk of its points (`partial`, partial_sums.py; extents
of 1: the report counts one chunk's)."""

from __future__ import annotations

from dataclasses import dataclass

from .graph import Graph, Value
from .groups import loop_groups
from .partial_sums import partial_sums
from .polyhedral import Polyhedral
from .roles import dim_roles


@dataclass
class Store:
    value: Value
    kind: str  # point | window | block | full | growable | partial | input
    extents: list[str]  # per domain dim: an int or a bound symbol, as text
    point_factors: list[str]  # per point dim (a `?` bounded by its slice)

    def attribute(self) -> str:
        return f"#pdg.store<{self.kind}, [{', '.join(self.extents)}]>"

    def factors(self) -> list[str]:
        """The number of elements as factors: extents, then point dims."""
        return [*self.extents, *self.point_factors]


def plan_storage(graph: Graph, poly: Polyhedral | None = None) -> list[Store]:
    poly = poly or Polyhedral(graph)
    roles = dim_roles(graph, poly)
    groups = loop_groups(graph, poly)
    readers: dict[int, list] = {id(v): [] for v in graph.values}
    for read in graph.reads:
        readers[id(read.producer)].append(read)
    summed = partial_sums(graph, roles)
    return [
        Store(v, "partial", ["1"] * len(v.domain), _point_factors(graph, poly, v))
        if id(v) in summed
        else _store(graph, poly, roles, groups, v, readers[id(v)])
        for v in graph.values
    ]


def _store(graph, poly, roles, groups, v: Value, reads) -> Store:
    point = _point_factors(graph, poly, v)
    if v.kind == "input":
        return Store(v, "input", [graph.dims[d].bound for d in v.domain], point)
    extents, kinds = [], set()
    for d in v.domain:
        dim = graph.dims[d]
        if roles[d] == "parallel":
            extents.append(dim.bound)
            continue
        if any(not groups.runs_inside(r.consumer, v, d) and d in r.consumer.domain for r in reads):
            size, shape = None, "full"  # read along d after its nest: every step is kept
        else:
            size, shape = _lookback(poly, v, d, reads)
        if size is not None and dim.kind == "static" and size >= dim.size:
            size = None  # a window as long as the dim is all of it
        if v.is_output or size is None:
            extents.append(dim.bound)
            kinds.add("growable" if dim.kind == "dynamic" else "full")
        else:
            extents.append(str(size))
            kinds.add(shape if size > 1 else "point")
    for kind in ("growable", "full", "window", "block", "point"):
        if kind in kinds:
            return Store(v, kind, extents, point)
    return Store(v, "point", extents, point)


def _lookback(poly: Polyhedral, v: Value, dim: str, reads) -> tuple[int | None, str]:
    """(steps to keep along dim, 'window' or 'block'); None: all of them."""
    size, block = 1, True
    for read in reads:
        if dim not in read.consumer.domain:
            # Read after the dim ended: only the last few steps are needed
            # when the read is near the end (acc[b, T - 1] keeps one).
            last = poly.upper_bound(poly.from_end(read, dim))
            if last is None:
                return None, "full"
            size = max(size, last)
            block = False
            continue
        deltas = poly.distances(read, dim)
        back = poly.upper_bound(deltas)
        ahead = poly.lower_bound(deltas)
        if back is None or ahead is None:
            return None, "full"
        need = max(back, 0) - min(ahead, 0) + 1  # the steps between both ends
        if need > 1:
            entry = read.entries[read.producer.domain.index(dim)]
            block &= entry[0] == "slice" and any("floor(" in lb for lb in entry[1])
        size = max(size, need)
    return size, "block" if block else "window"


def _slice_bounds(graph: Graph, poly: Polyhedral, v: Value, memo: dict) -> frozenset:
    """What can bound a symbolic point size of `v`: the sizes of the
    slices it or any value it reads (transitively) takes, as ints (a
    window's size) and bound symbols (a slice as long as its dim)."""
    if id(v) in memo:
        return memo[id(v)]
    memo[id(v)] = frozenset()  # cycles: no contribution from the back edge
    found: set = set()
    for read in v.reads:
        for j, entry in enumerate(read.entries):
            if entry[0] != "slice":
                continue
            sliced = read.producer.domain[j]
            back = None
            if sliced in read.consumer.domain:
                back = poly.upper_bound(poly.distances(read, sliced))
            found.add(graph.dims[sliced].bound if back is None else back + 1)
        if any(d is None for d in read.producer.shape):
            found |= _slice_bounds(graph, poly, read.producer, memo)
    memo[id(v)] = frozenset(found)
    return memo[id(v)]


def _point_factors(graph: Graph, poly: Polyhedral, v: Value, memo: dict | None = None) -> list[str]:
    """Per point dim: its size, or for `?` the largest slice that can reach
    the value: one bound, or `max(...)` of several (e.g. a batch B and a
    window of 64 both reach a batched attention's scores)."""
    memo = {} if memo is None else memo
    out = []
    for d in v.shape:
        if d is not None:
            out.append(str(d))
            continue
        found = _slice_bounds(graph, poly, v, memo)
        ints = [b for b in found if isinstance(b, int) or str(b).isdigit()]
        symbols = sorted(str(b) for b in found if b not in ints)
        parts = symbols + ([str(max(int(b) for b in ints))] if ints else [])
        if not parts:
            parts = ["1"]
        out.append(parts[0] if len(parts) == 1 else f"max({', '.join(parts)})")
    return out
