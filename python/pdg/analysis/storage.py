"""Storage planning: each value's store from its footprint.

Along a parallel dim a store keeps every coordinate (the bound, e.g. B).
Along a sequential dim, a value read after its loop nest (groups.py) keeps
every step; otherwise it keeps what later reads in the nest still need: the largest
distance back any read looks, from isl (`Polyhedral.upper_bound`):

    0         -> point     (only the latest step)
    w - 1     -> window    (a circular buffer of w; `block` when the reads
                            are block-shaped, e.g. (t // s) * s : t + 1;
                            w - 1 once the schedule is known, when the
                            reads w - 1 back come before the write in a
                            step: slot_reuse.py)
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
from .schedule import Slot
from .size_sources import UNKNOWN, case_size_sources
from .slot_reuse import reused_window


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


def plan_storage(
    graph: Graph, poly: Polyhedral | None = None, slots: dict[int, Slot] | None = None
) -> list[Store]:
    """Each value's store. With `slots`, the schedule the graph runs by (by
    id(value), e.g. attached_schedule.attached_slots), a window whose
    oldest step is read before it is overwritten keeps one step fewer
    (slot_reuse.py)."""
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
        else _store(graph, poly, roles, groups, v, readers[id(v)], slots)
        for v in graph.values
    ]


def _store(graph, poly, roles, groups, v: Value, reads, slots) -> Store:
    point = _point_factors(graph, poly, v)
    if v.kind == "input":
        return Store(v, "input", [_per_rank(graph.dims[d]) for d in v.domain], point)
    extents, kinds = [], set()
    for d in v.domain:
        dim = graph.dims[d]
        if dim.worker:  # each rank holds its own point only
            extents.append("1")
            continue
        if roles[d] == "parallel":
            extents.append(dim.bound)
            continue
        if any(not groups.runs_inside(r.consumer, v, d) and d in r.consumer.domain for r in reads):
            size, shape = None, "full"  # read along d after its nest: every step is kept
        else:
            size, shape = _lookback(poly, v, d, reads)
            if slots is not None and shape == "window" and size is not None and size > 1:
                reused = reused_window(poly, groups, v, d, reads, slots)
                size = size if reused is None else min(size, reused)
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


def _per_rank(dim) -> str:
    """An input's extent along `dim` in one process: 1 along a worker dim."""
    return "1" if dim.worker else dim.bound


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


def _slice_bound(graph: Graph, poly: Polyhedral, read, j: int):
    """The most steps the slice of `read` along producer dim `j` takes: an
    int (a window) or the dim's bound symbol (a slice as long as the dim)."""
    sliced = read.producer.domain[j]
    back = None
    if sliced in read.consumer.domain:
        back = poly.upper_bound(poly.distances(read, sliced))
    return graph.dims[sliced].bound if back is None else back + 1


def _slice_bounds(graph: Graph, poly: Polyhedral, v: Value, memo: dict) -> frozenset:
    """What can bound any symbolic point size of `v`: the sizes of the
    slices it or any value it reads (transitively) takes, as ints (a
    window's size) and bound symbols (a slice as long as its dim). The
    answer when a size's own sources are unknown (see _dim_bounds)."""
    if id(v) in memo:
        return memo[id(v)]
    memo[id(v)] = frozenset()  # cycles: no contribution from the back edge
    found: set = set()
    for read in v.reads:
        for j, entry in enumerate(read.entries):
            if entry[0] == "slice":
                found.add(_slice_bound(graph, poly, read, j))
        if any(d is None for d in read.producer.shape):
            found |= _slice_bounds(graph, poly, read.producer, memo)
    memo[id(v)] = frozenset(found)
    return memo[id(v)]


def _dim_bounds(graph: Graph, poly: Polyhedral, v: Value, k: int, memo: dict) -> frozenset:
    """What bounds the size of `v`'s symbolic point dim `k`: followed back
    through each case's body to the argument dims it comes from
    (size_sources), each a slice of a read or a point dim of a producer
    (whose own bounds then count). A batched value's batch dim is bounded
    by the batch, not by the attention slices elsewhere in its body."""
    key = (id(v), k)
    if key in memo:
        return memo[key]
    memo[key] = frozenset()  # cycles: no contribution from the back edge
    if v.kind != "node":
        memo[key] = _slice_bounds(graph, poly, v, memo.setdefault("all", {}))
        return memo[key]
    found: set = set()
    for case in range(len(v.conditions)):
        if ("case", id(v), case) not in memo:
            memo[("case", id(v), case)] = case_size_sources(v.op, case)
        dims = memo[("case", id(v), case)]
        sources = dims[k] if k < len(dims) else UNKNOWN
        if sources is UNKNOWN:
            memo[key] = _slice_bounds(graph, poly, v, memo.setdefault("all", {}))
            return memo[key]
        reads = sorted((r for r in v.reads if r.case == case), key=lambda r: r.index)
        for arg, d in sources:
            read = reads[arg]
            sliced = [j for j, e in enumerate(read.entries) if e[0] == "slice"]
            if d < len(sliced):
                found.add(_slice_bound(graph, poly, read, sliced[d]))
                continue
            pd = d - len(sliced)
            size = read.producer.shape[pd]
            found |= (
                {size} if size is not None else _dim_bounds(graph, poly, read.producer, pd, memo)
            )
    memo[key] = frozenset(found)
    return memo[key]


def _point_factors(graph: Graph, poly: Polyhedral, v: Value, memo: dict | None = None) -> list[str]:
    """Per point dim: its size, or for `?` the largest size it can take:
    one bound, or `max(...)` of several (e.g. a window of 64 and a slice
    of T both reach one dim)."""
    memo = {} if memo is None else memo
    out = []
    for k, d in enumerate(v.shape):
        if d is not None:
            out.append(str(d))
            continue
        found = _dim_bounds(graph, poly, v, k, memo)
        ints = [b for b in found if isinstance(b, int) or str(b).isdigit()]
        symbols = sorted(str(b) for b in found if b not in ints)
        parts = symbols + ([str(max(int(b) for b in ints))] if ints else [])
        if not parts:
            parts = ["1"]
        out.append(parts[0] if len(parts) == 1 else f"max({', '.join(parts)})")
    return out
