"""Legality of a program's reads, decided exactly with isl:

- every point a read touches lies in the producer's domain, for every value
  of the bound symbols (a read below t = 0, past a static bound, or past T);
- inside a cycle of values, reads along a sequential dim look one way: all
  back (a loop from the first step) or, for a static or launch dim, all
  ahead (a loop from the last step, as the gradient of a recurrence); a
  cycle reading both ways could never run step by step.

Each problem is a `Problem` at the consumer's location with an example point.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from mlir import ir

from .cycles import components
from .graph import Graph, Read
from .polyhedral import Polyhedral, example_point
from .roles import carried, dim_roles


@dataclass
class Problem:
    message: str
    location: ir.Location


def _describe(read: Read) -> str:
    entries = []
    for e in read.entries:
        entries.append(e[1] if e[0] == "point" else f"{', '.join(e[1])} : {', '.join(e[2])}")
    return f"'{read.producer.name}'[{', '.join(entries)}]"


def _group_symbol_problems(graph: Graph) -> list[Problem]:
    """A dynamic dim ends separately for each point of its `until` value's
    other dims (each sequence b its own T). A read through its bound symbol
    T must come from a consumer that has those dims, or T is ambiguous."""
    problems = []
    for dim in graph.dims.values():
        if dim.kind != "dynamic" or dim.until is None:
            continue
        groups = [d for d in graph.value(dim.until).domain if d != dim.name]
        for read in graph.reads:
            uses = any(dim.symbol in _symbols_of(e) for e in read.entries)
            missing = [g for g in groups if g not in read.consumer.domain]
            if uses and missing:
                problems.append(
                    Problem(
                        f"reads {_describe(read)} through '{dim.symbol}', but '{dim.name}' ends "
                        f"separately for each {', '.join(missing)} and '{read.consumer.name}' is "
                        f"not defined over {', '.join(missing)}: add it to the domain",
                        read.consumer.op.location,
                    )
                )
    return problems


def _symbols_of(entry) -> set[str]:
    import re

    text = entry[1] if entry[0] == "point" else " ".join(entry[1] + entry[2])
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def check_legality(graph: Graph, poly: Polyhedral | None = None) -> list[Problem]:
    poly = poly or Polyhedral(graph)
    problems: list[Problem] = []
    for read in graph.reads:
        outside = poly.read_outside(read)
        if not outside.is_empty():
            problems.append(
                Problem(
                    f"reads {_describe(read)} outside the domain of '{read.producer.name}' "
                    f"[{', '.join(read.producer.domain)}], e.g. {example_point(outside)}; "
                    "guard the case or clamp the index",
                    read.consumer.op.location,
                )
            )
    problems += _group_symbol_problems(graph)
    roles = dim_roles(graph, poly)
    # Dims from the outermost, as roles.py: the reads a loop carries (from an
    # earlier step of it: the weights of the iteration before) are kept by
    # its order and leave the graph, so the cycles inside one step of it are
    # judged by themselves (a pass over a finished sequence inside a
    # training loop may read its last step).
    reads = list(graph.reads)
    looks_back: set[tuple[int, str]] = set()  # (cycle, dim) with a read of an earlier point
    found = []
    for dim, role in roles.items():
        if role != "sequential":
            continue
        comp = components(graph, reads)
        for read in reads:
            deltas = poly.distances(read, dim)
            if comp[id(read.consumer)] != comp[id(read.producer)] or deltas is None:
                continue
            negative = isl.Set("{ [x] : x < 0 }").align_params(deltas.get_space())
            ahead = deltas.intersect(negative)
            if not ahead.is_empty():
                found.append((read, dim, ahead, comp))
            elif not deltas.is_subset(isl.Set("{ [0] }").align_params(deltas.get_space())):
                looks_back.add((comp[id(read.consumer)], dim))
        reads = [r for r in reads if not carried(poly, r, dim)]
    # A recurrence running backward along a dynamic dim is fine once the
    # dim's end is known (the gradient of a generation loop): it runs in a
    # later loop, unless the end depends on it.
    for read, dim, ahead, comp in found:
        if (comp[id(read.consumer)], dim) in looks_back:
            message = (
                f"reads {_describe(read)} from the future of sequential dim '{dim}' "
                f"inside a cycle of values (e.g. distance {example_point(ahead)}); "
                f"read an earlier point such as {dim} - 1"
            )
        elif graph.dims[dim].kind == "dynamic" and _ends_on(graph, graph.dims[dim], read):
            message = (
                f"reads {_describe(read)} at a later point of dynamic dim '{dim}' "
                f"(e.g. distance {example_point(ahead)}), and '{dim}' ends on a value that "
                f"depends on it: a recurrence that runs backward along '{dim}' needs its end, "
                "which is found only by running forward"
            )
        else:
            continue  # a recurrence that runs backward: its loop steps from the end
        problems.append(Problem(message, read.consumer.op.location))
    return problems


def _ends_on(graph: Graph, dim, read: Read) -> bool:
    """Whether the `until` value of `dim` depends on read's consumer."""
    if dim.until is None:
        return False
    seen, todo = set(), [graph.value(dim.until)]
    while todo:
        v = todo.pop()
        if v is read.consumer:
            return True
        if id(v) in seen:
            continue
        seen.add(id(v))
        todo += [r.producer for r in v.reads]
    return False
