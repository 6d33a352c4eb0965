"""Overlap of generation and update along a training dim, proven with isl.

A program that samples inside a training loop over `dim` (GRPO as one
program: iteration i samples completions, scores them and steps the
weights) can run as a pipeline when sampling lags the weights: stage s
runs the generation of iteration s + 1 beside the update of iteration s.
This module splits the values over `dim` into those two parts, gives each
a stage, and proves from every read's dependence relation that no read
crosses the two parts inside one stage, so the parts of a stage may run
concurrently.

The parts, from the sampled tokens (`roots`):
- generation: the roots and every value over `dim` they read at the same
  iteration, transitively (the behaviour policy's forward over t, its
  prompt tokens, the lagged weights it reads);
- update: the rest. Among them, `carry` values read only earlier
  iterations of values over `dim` (the weights and optimizer state of
  iteration i are copies of the update of i - 1): they finish the update
  of i - 1, so they run in that stage.

The stage of a point: theta(v, i) = i - 1 for generation and carry values,
i for the rest. A read is allowed when, over its whole relation (every
value of the bound symbols), theta(consumer) - theta(producer) >= 1 across
the two parts and >= 0 within one. In synchronous GRPO (staleness 0) the
sampling reads the weights of its own iteration, which are the update of
the one before, in the same stage: the proof fails at that read, with an
example point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from .graph import Graph, Read, Value
from .legality import Problem, _describe
from .polyhedral import Polyhedral, example_point, isl_name

GENERATION, UPDATE = "generation", "update"


@dataclass
class OverlapPlan:
    """The two parts of each stage and every value's stage offset along
    `dim` (1: the value of iteration i runs in stage i - 1)."""

    graph: Graph
    dim: str
    generation: list[Value]
    update: list[Value]
    shift: dict[str, int]  # value name -> 0 or 1
    problems: list[Problem] = field(default_factory=list)

    @property
    def legal(self) -> bool:
        return not self.problems

    def part(self, name: str) -> str:
        return GENERATION if any(v.name == name for v in self.generation) else UPDATE


def plan_overlap(
    graph: Graph, dim: str, roots: list[str], poly: Polyhedral | None = None
) -> OverlapPlan:
    """The skewed schedule that puts generation of i + 1 beside the update
    of i, and the reads that forbid it (`problems`, empty when legal).
    `roots`: the values holding the sampled tokens."""
    poly = poly or Polyhedral(graph)
    if dim not in graph.dims:
        raise ValueError(f"no dim '{dim}' in @{graph.name}")
    over = [v for v in graph.values if dim in v.domain and v.kind != "input"]
    names = {v.name for v in over}
    missing = [r for r in roots if r not in names]
    if missing or not roots:
        raise ValueError(
            f"the sampled tokens {missing or roots} are not computed over '{dim}' in @{graph.name}"
        )
    generation = _same_step_closure(graph, poly, dim, roots, names)
    shift: dict[str, int] = {}
    for v in over:
        if v.name in generation:
            shift[v.name] = 1
        elif _reads_only_earlier(poly, v, dim, names):
            shift[v.name] = 1  # carry: a copy of the previous iteration's update
        else:
            shift[v.name] = 0
    plan = OverlapPlan(
        graph,
        dim,
        [v for v in over if v.name in generation],
        [v for v in over if v.name not in generation],
        shift,
    )
    for v in over:
        for read in v.reads:
            if read.producer.name in names:
                problem = _check_read(poly, plan, read)
                if problem is not None:
                    plan.problems.append(problem)
    return plan


def _same_step_closure(graph, poly, dim, roots, names) -> set[str]:
    """The roots and every value over `dim` they read at their own
    iteration, transitively."""
    found, todo = set(roots), [graph.value(r) for r in roots]
    while todo:
        v = todo.pop()
        for read in v.reads:
            p = read.producer
            if p.name not in names or p.name in found:
                continue
            deltas = poly.distances(read, dim)
            if deltas is not None and not deltas.intersect(_zero(deltas)).is_empty():
                found.add(p.name)
                todo.append(p)
    return found


def _reads_only_earlier(poly, v: Value, dim: str, names) -> bool:
    """Whether every read of v from a value over `dim` looks at an earlier
    iteration (distance >= 1 at every point)."""
    inner = [r for r in v.reads if r.producer.name in names]
    if not inner:
        return False  # computed from inputs alone: it runs where it is needed
    for read in inner:
        deltas = poly.distances(read, dim)
        low = poly.lower_bound(deltas) if deltas is not None else None
        if low is None or low < 1:
            return False
    return True


def _check_read(poly: Polyhedral, plan: OverlapPlan, read: Read) -> Problem | None:
    """The read's stage distance theta(consumer) - theta(producer) must be
    at least 1 across the parts, 0 within one, at every point of its
    relation; else a Problem with a point that breaks it."""
    c, p = read.consumer, read.producer
    across = plan.part(c.name) != plan.part(p.name)
    need = 1 if across else 0
    # i_c - shift_c - (i_p - shift_p) < need  <=>  i_c - i_p < need + shift_c - shift_p
    limit = need + plan.shift[c.name] - plan.shift[p.name]
    bad = _relation_where(poly, read, plan.dim, limit)
    if bad.is_empty():
        return None
    where = example_point(bad)
    if across and plan.part(c.name) == GENERATION:
        message = (
            f"generation and update cannot overlap along '{plan.dim}': '{c.name}', of the "
            f"generation of iteration {plan.dim} + 1, reads {_describe(read)}, which the update "
            f"of iteration {plan.dim} computes in the same stage (e.g. {where}); sample with "
            f"the weights of an earlier iteration (staleness >= 1)"
        )
    elif across:
        message = (
            f"generation and update cannot overlap along '{plan.dim}': '{c.name}', of the "
            f"update, reads {_describe(read)} of a generation that runs in a later stage "
            f"(e.g. {where})"
        )
    else:
        message = (
            f"the skewed schedule along '{plan.dim}' would run {_describe(read)} after "
            f"'{c.name}', which reads it (e.g. {where})"
        )
    return Problem(message, c.op.location)


def _relation_where(poly: Polyhedral, read: Read, dim: str, limit: int) -> isl.Map:
    """The part of the read's relation where consumer[dim] - producer[dim]
    < limit."""
    c, p = read.consumer, read.producer
    rel = poly.relation(read)
    cvars = [f"c{k}" for k in range(len(c.domain))]
    pvars = [f"p{k}" for k in range(len(p.domain))]
    ci = cvars[c.domain.index(dim)]
    pi = pvars[p.domain.index(dim)]
    params = rel.get_space().dim(isl.dim_type.param)
    names = [rel.get_space().get_dim_name(isl.dim_type.param, k) for k in range(params)]
    prefix = f"[{', '.join(names)}] -> " if names else ""
    where = isl.Map(
        f"{prefix}{{ {isl_name(c.name)}[{', '.join(cvars)}] -> "
        f"{isl_name(p.name)}[{', '.join(pvars)}] : {ci} - {pi} < {limit} }}"
    )
    return rel.intersect(where)


def _zero(like: isl.Set) -> isl.Set:
    return isl.Set.universe(like.get_space()).fix_val(isl.dim_type.set, 0, 0)
