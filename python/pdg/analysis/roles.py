"""Dimension roles: a dim is sequential (a loop) when it is dynamic (its
bound is discovered as it runs), when a read on a dependence cycle looks at
another coordinate along it (the t - 1 or the window of a recurrence), or
when reads look only back along it (a loop keeps just what they need).
Otherwise it is parallel: every value over it is computed whole, producers
first, which a read ahead (a gradient reading the forward pass at t + 1)
needs. Parallel dims can be vectorized."""

from __future__ import annotations

from .cycles import components
from .graph import Graph
from .polyhedral import Polyhedral


def dim_roles(graph: Graph, poly: Polyhedral | None = None) -> dict[str, str]:
    poly = poly or Polyhedral(graph)
    if poly.roles is not None:
        return poly.roles
    # A dynamic dim is found step by step (its bound is known only once its
    # `until` holds): it is a loop whatever its reads do.
    roles = {
        name: "sequential" if dim.kind == "dynamic" else "parallel"
        for name, dim in graph.dims.items()
    }
    # Dims from the outermost. A dim is a loop when a cycle of the reads
    # left moves along it, or when reads look only back along it (windows
    # of an earlier value: a loop keeps just the window). A read ahead (a
    # gradient reading the forward pass at t + 1) needs the producer whole
    # first: its dim stays parallel unless a cycle forces the loop. Reads a
    # loop carries (from an earlier step of it) are satisfied by the loop's
    # order and leave the graph, so a training step inside an iteration
    # loop can still be parallel in t.
    reads = list(graph.reads)
    for dim in graph.dims:
        if roles[dim] != "sequential" and _needs_loop(graph, poly, reads, dim):
            roles[dim] = "sequential"
        if roles[dim] == "sequential":
            reads = [r for r in reads if not carried(poly, r, dim)]
    poly.roles = roles
    return roles


def _needs_loop(graph: Graph, poly: Polyhedral, reads: list, dim: str) -> bool:
    cycle = components(graph, reads)
    back = ahead = False
    for read in reads:
        deltas = poly.distances(read, dim)
        if deltas is None or deltas.is_subset(_zero(deltas)):
            continue  # not along dim, or at the same coordinate
        if cycle[id(read.producer)] == cycle[id(read.consumer)]:
            return True
        low = poly.lower_bound(deltas)
        if low is not None and low >= 0:
            back = True
        else:
            ahead = True
    return back and not ahead


def carried(poly: Polyhedral, read, dim: str) -> bool:
    """Whether every point of the read is at an earlier step along dim."""
    deltas = poly.distances(read, dim)
    if deltas is None:
        return False
    low = poly.lower_bound(deltas)
    return low is not None and low >= 1


def _zero(like):
    import islpy as isl

    return isl.Set.universe(like.get_space()).fix_val(isl.dim_type.set, 0, 0)
