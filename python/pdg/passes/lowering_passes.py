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
    """The planned, scheduled graph becomes an entry `func.func` that owns
    the stores as memrefs (circular, growable, exact) and runs the loops
    (`scf.for`, or `scf.while` for a dynamic dim), with the bodies outlined
    and bufferized in destination-passing style and udfs called through a
    callback table. Every loop step checks the runtime's stop flag."""
    from pdg.lowering import lower_to_loops  # pdg.lowering imports this package

    lower_to_loops(module)
