"""The lowering as a pass of pdg-opt: pdg-lower-to-loops replaces each
planned and scheduled pdg.graph with its entry function and bufferized
bodies.

pdg.lowering sits above pdg.passes (it runs their pipelines), so the
registry cannot import it; the command line, above both, registers it, as
an -opt tool registers the passes of the libraries it links. The compiler
(pdg.lowering.artifact) calls lower_to_loops directly.
"""

from __future__ import annotations

from mlir import ir

from pdg.passes.registry import register


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
    from pdg.lowering import lower_to_loops  # MLIR's lowering libraries: only when run

    lower_to_loops(module)
