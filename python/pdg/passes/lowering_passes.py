"""The lowering as a pass: pdg-lower-to-loops replaces each planned and
scheduled pdg.graph with its entry function and bufferized bodies."""

from __future__ import annotations

from mlir import ir

from .registry import register


@register(
    "pdg-lower-to-loops",
    "Lower each planned, scheduled pdg.graph to an entry func.func: stores as "
    "memrefs (circular, growable, exact), scf loops over the sequential dim, "
    "bodies outlined and bufferized in destination-passing style",
)
def lower_to_loops_pass(module: ir.Module) -> None:
    from pdg.lowering import lower_to_loops  # pdg.lowering imports this package

    lower_to_loops(module)
