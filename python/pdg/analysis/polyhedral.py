"""The graph as integer sets and maps (islpy).

- `domain(v)`: the points of a value, `[B, T] -> { v[b, t] : 0 <= b < B and
  0 <= t < T }`, parameters for launch and dynamic bounds (each >= 1).
- `relation(read)`: the dependence of one read, from each consumer point
  where its case holds to every producer point it reads.
- `distances(read, dim)`: the set of `consumer[dim] - producer[dim]` over the
  relation: how far back (>= 0) or ahead (< 0) along `dim` the read looks.

Dynamic bounds end per group (each sequence its own T); one parameter T
stands for any of them, so every fact holds for each group."""

from __future__ import annotations

import re
from functools import cached_property

import islpy as isl

from .graph import Graph, Read, Value

_IDENT = re.compile(r"[^A-Za-z0-9_]")


def isl_name(name: str) -> str:
    """A tuple name isl accepts."""
    name = _IDENT.sub("_", name)
    return name if re.match(r"[A-Za-z_]", name) else f"v_{name}"


class Polyhedral:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.params = graph.symbols
        # Every analysis asks for the same relations and distances: build
        # each once per graph.
        self._relations: dict[int, isl.Map] = {}
        self._distances: dict[tuple[int, str], isl.Set | None] = {}
        self._domains: dict[tuple[str, tuple[str, ...]], isl.Set] = {}
        self.roles: dict[str, str] | None = None  # filled by roles.dim_roles
        self.groups = None  # filled by groups.loop_groups

    @cached_property
    def _context(self) -> str:
        return " and ".join(f"{p} >= 1" for p in self.params) or "true"

    def _prefix(self) -> str:
        return f"[{', '.join(self.params)}] -> " if self.params else ""

    def bounds(self, dims: tuple[str, ...]) -> str:
        parts = [f"0 <= {d} < {self.graph.dims[d].bound}" for d in dims]
        return " and ".join(parts + [self._context])

    def domain(self, v: Value) -> isl.Set:
        # By name and dims, which are all the set depends on: read_outside
        # asks for a producer's domain once per read of it.
        key = (v.name, tuple(v.domain))
        if key not in self._domains:
            dims = ", ".join(v.domain)
            self._domains[key] = isl.Set(
                f"{self._prefix()}{{ {isl_name(v.name)}[{dims}] : {self.bounds(v.domain)} }}"
            )
        return self._domains[key]

    def relation(self, read: Read) -> isl.Map:
        if id(read) not in self._relations:
            self._relations[id(read)] = self._build_relation(read)
        return self._relations[id(read)]

    def _build_relation(self, read: Read) -> isl.Map:
        c, p = read.consumer, read.producer
        outs, constraints = [], []
        for j, entry in enumerate(read.entries):
            if entry[0] == "point":
                outs.append(entry[1])
                continue
            fresh = f"pdg_s{j}"
            outs.append(fresh)
            constraints += [f"{fresh} >= {lb}" for lb in entry[1]]
            constraints += [f"{fresh} < {ub}" for ub in entry[2]]
        conds = " and ".join([self.bounds(c.domain), *read.condition, *constraints])
        text = (
            f"{self._prefix()}{{ {isl_name(c.name)}[{', '.join(c.domain)}] -> "
            f"{isl_name(p.name)}[{', '.join(outs)}] : {conds} }}"
        )
        return isl.Map(text)

    def distances(self, read: Read, dim: str) -> isl.Set | None:
        """{ consumer[dim] - producer[dim] } or None when either lacks dim."""
        key = (id(read), dim)
        if key not in self._distances:
            self._distances[key] = self._build_distances(read, dim)
        return self._distances[key]

    def _build_distances(self, read: Read, dim: str) -> isl.Set | None:
        c, p = read.consumer, read.producer
        if dim not in c.domain or dim not in p.domain:
            return None
        rel = self.relation(read)
        cvars = [f"c{i}" for i in range(len(c.domain))]
        pvars = [f"p{i}" for i in range(len(p.domain))]
        delta = f"{cvars[c.domain.index(dim)]} - {pvars[p.domain.index(dim)]}"
        proj = isl.Map(
            f"{self._prefix()}{{ [{isl_name(c.name)}[{', '.join(cvars)}] -> "
            f"{isl_name(p.name)}[{', '.join(pvars)}]] -> [{delta}] }}"
        )
        return rel.wrap().apply(proj)

    def from_end(self, read: Read, dim: str) -> isl.Set:
        """{ bound(dim) - producer[dim] } over the read: how close to the end
        of `dim` the producer points it reads are (1: the last step)."""
        c, p = read.consumer, read.producer
        rel = self.relation(read)
        cvars = [f"c{i}" for i in range(len(c.domain))]
        pvars = [f"p{i}" for i in range(len(p.domain))]
        bound = self.graph.dims[dim].bound
        proj = isl.Map(
            f"{self._prefix()}{{ [{isl_name(c.name)}[{', '.join(cvars)}] -> "
            f"{isl_name(p.name)}[{', '.join(pvars)}]] -> "
            f"[{bound} - {pvars[p.domain.index(dim)]}] }}"
        )
        return rel.wrap().apply(proj)

    def read_outside(self, read: Read) -> isl.Map:
        """The part of a read that falls outside the producer's domain."""
        return self.relation(read).subtract_range(self.domain(read.producer))

    @staticmethod
    def upper_bound(s: isl.Set) -> int | None:
        """The largest element of a 1-d set over every value of the bound
        symbols, or None if there is none (it grows with a symbol)."""
        return _optimum(s, maximum=True)

    @staticmethod
    def lower_bound(s: isl.Set) -> int | None:
        """The smallest element, or None if unbounded below."""
        return _optimum(s, maximum=False)


def _optimum(s: isl.Set, maximum: bool) -> int | None:
    s = _without_params(s)
    if s.is_empty():
        return None
    try:
        pw = s.dim_max(0) if maximum else s.dim_min(0)
    except isl.Error:  # unbounded optimum
        return None
    return _constant(pw)


def _without_params(s: isl.Set) -> isl.Set:
    return s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param))


def _constant(pw: isl.PwAff) -> int | None:
    values = set()
    for _, aff in pw.get_pieces():
        if not aff.is_cst():
            return None
        values.add(aff.get_constant_val().to_python())
    return max(values) if values else None


def example_point(s: isl.Set | isl.Map) -> str:
    """One point of a non-empty set or map, for messages."""
    if isinstance(s, isl.Map):
        s = s.wrap()
    point = s.sample_point()
    return str(point).replace("{ ", "").replace(" }", "")
