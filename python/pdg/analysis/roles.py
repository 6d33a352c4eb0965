"""Dimension roles: a dim is parallel when no read moves along it (every
read between values over the dim keeps the consumer's coordinate), and
sequential when some read looks at another coordinate (t - 1, a window)
or when it is dynamic (its bound is discovered as it runs).
Sequential dims become loops; parallel dims can be vectorized."""

from __future__ import annotations

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
    for read in graph.reads:
        for dim in graph.dims:
            deltas = poly.distances(read, dim)
            if deltas is None:
                # A consumer without the dim reading the producer along it
                # (x[b, 0 : T]) waits for the whole dim: it orders the dim.
                # Inputs are whole before anything runs: reading them so
                # orders nothing.
                if (
                    dim in read.producer.domain
                    and dim not in read.consumer.domain
                    and read.producer.kind != "input"
                ):
                    roles[dim] = "sequential"
                continue
            if not deltas.is_subset(_zero(deltas)):
                roles[dim] = "sequential"
    poly.roles = roles
    return roles


def _zero(like):
    import islpy as isl

    return isl.Set.universe(like.get_space()).fix_val(isl.dim_type.set, 0, 0)
