"""The memory report: every store's size as a formula in the bound
symbols, and the peak (all stores live for the whole run), evaluated for
given symbol values."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from pdg import _ext
from pdg.runtime.formula import evaluate, formula

from .attached_schedule import attached_slots
from .graph import Graph
from .polyhedral import Polyhedral
from .storage import Store, _point_factors, plan_storage


def stores_of(graph: Graph) -> list[Store]:
    """The stores attached by pdg-plan-storage, or a fresh plan (by the
    attached schedule, if any) if the graph has none."""
    poly = Polyhedral(graph)
    attached = [v for v in graph.values if "pdg.store" in v.op.attributes]
    if not attached:
        return plan_storage(graph, poly, attached_slots(graph))
    stores = []
    for v in graph.values:
        if "pdg.store" not in v.op.attributes:
            continue
        store = _ext.StoreAttr(v.op.attributes["pdg.store"])
        stores.append(Store(v, store.kind, store.extents, _point_factors(graph, poly, v)))
    return stores


@dataclass
class Line:
    name: str
    kind: str
    extents: list[str]
    monomials: dict  # tuple of symbols -> coefficient (bytes)
    is_output: bool = False


def _monomials(factors: list[str], element_bytes: int) -> dict:
    coeff, syms = element_bytes, []
    for f in factors:
        if re.fullmatch(r"-?\d+", f):
            coeff *= int(f)
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", f):
            syms.append(f)
        else:  # an affine extent such as `B * 2`: keep it as one factor
            syms.append(f"({f})")
    return {tuple(sorted(syms)): coeff}


def report_lines(stores: list[Store]) -> list[Line]:
    lines = []
    for s in stores:
        elem = s.value.point_bytes
        if elem is None:  # symbolic point: bytes per element times factors
            from .graph import ELEMENT_BYTES

            elem = ELEMENT_BYTES.get(s.value.element, 4)
            factors = s.factors()
        else:
            factors = s.extents
        lines.append(
            Line(s.value.name, s.kind, s.extents, _monomials(factors, elem), s.value.is_output)
        )
    return lines


def communication_lines(graph: Graph) -> list[Line]:
    """Per collective, the bytes each rank hands MPI over the whole run:
    its input point's bytes once per point of the collective's value
    (`extents`: the dims' bounds; a reduce-scatter's or a shift's value is
    over the worker dim too, where each rank computes its own point only:
    extent 1). What goes over the wire is the MPI library's: a ring
    all-reduce sends up to twice that per rank, an all-gather receives W
    times it, a broadcast's root sends it W - 1 times, a reduce-scatter
    sends (W - 1) / W of its W blocks, a shift sends its point to one rank.
    Collectives of symbolic point shape are left out."""
    lines = []
    for v in graph.values:
        if v.kind != "collective":
            continue
        elem = v.reads[0].producer.point_bytes
        if elem is None:
            continue
        extents = ["1" if graph.dims[d].worker else graph.dims[d].bound for d in v.domain]
        lines.append(Line(v.name, v.collective["op"], extents, _monomials(extents, elem)))
    return lines


def peak(lines: list[Line], outputs: bool | None = None) -> dict:
    """Bytes of all stores (they live for the whole run); only the working
    stores (outputs=False) or only the results (outputs=True)."""
    total: dict = defaultdict(int)
    for line in lines:
        if outputs is not None and line.is_output != outputs:
            continue
        for syms, coeff in line.monomials.items():
            total[syms] += coeff
    return dict(total)


def render(
    graph_name: str,
    lines: list[Line],
    symbols: dict[str, int],
    communication: list[Line] | None = None,
) -> str:
    given = ", ".join(f"{k}={v}" for k, v in sorted(symbols.items())) or "none given"
    out = [
        f"memory report for @{graph_name} (symbols: {given})",
        f"  {'value':<24} {'store':<9} {'extents':<16} {'bytes (formula)':<28} bytes",
    ]
    for line in lines:
        value = evaluate(line.monomials, symbols)
        name = line.name + (" (output)" if line.is_output else "")
        out.append(
            f"  {name:<24} {line.kind:<9} {'[' + ', '.join(line.extents) + ']':<16} "
            f"{formula(line.monomials):<28} {'' if value is None else value}"
        )
    for label, which in (("working set", False), ("results", True), ("peak", None)):
        total = peak(lines, which)
        value = evaluate(total, symbols)
        shown = "" if value is None else f" = {value} bytes ({value / 2**20:.3f} MiB)"
        out.append(f"  {label}: {formula(total)}{shown}")
    if communication:
        out.append(f"  {'communication':<24} {'op':<14} {'extents':<15} bytes each rank gives MPI")
        for line in communication:
            value = evaluate(line.monomials, symbols)
            out.append(
                f"  {line.name:<24} {line.kind:<14} {'[' + ', '.join(line.extents) + ']':<15} "
                f"{formula(line.monomials):<28} {'' if value is None else value}"
            )
        total = peak(communication)
        value = evaluate(total, symbols)
        shown = "" if value is None else f" = {value} bytes ({value / 2**20:.3f} MiB)"
        out.append(f"  to MPI per rank: {formula(total)}{shown}")
    return "\n".join(out)
