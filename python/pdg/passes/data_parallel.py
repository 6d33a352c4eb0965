"""Data parallelism from Python: split a dim of a built program over ranks.

`split_over_workers(module, "p")` runs the C++ pass pdg-split-over-workers
(passes/Graph/SplitOverWorkers.cpp) on the module's graphs: one SPMD
program in which each rank holds its own share of p's points, and the sums
over p become the rank's partial sums and all-reduces. Run it on a built
module (pf.Program.build()), then interpret or compile the result as any
program with a worker dim (docs/parallel.md)."""

from __future__ import annotations

import re

from mlir import ir
from mlir.passmanager import PassManager

from pdg import _ext
from pdg.ir.source import DiagnosticCollector, to_diagnostic
from pdg.passes.registry import PassError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def split_over_workers(module: ir.Module, dim: str, worker: str = "w", world: str = "W") -> None:
    """Splits `dim` (a launch dim) of every graph in `module` over a new
    worker dim `worker < world WORLD`, in place. After it, the symbol of
    `dim` is each rank's share of its points. PassError (with the located
    diagnostics in its message) when the program cannot be split."""
    for name, what in ((dim, "dim"), (worker, "worker"), (world, "world")):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise PassError(f"{what}={name!r} is not a name: give a plain identifier, e.g. 'b'")
    pipeline = f"pdg.graph(pdg-split-over-workers{{dim={dim} worker={worker} world={world}}})"
    pm = PassManager("builtin.module", context=module.context)
    _ext.add_pass_pipeline(pm, pipeline)
    with DiagnosticCollector(module.context, errors_only=True) as diags:
        try:
            pm.run(module.operation)
            failed = None
        except ir.MLIRError as e:
            failed = [to_diagnostic(d) for d in e.error_diagnostics]
    if failed is not None:
        found = failed or diags.diagnostics
        text = "\n".join(f"{d.location}: error: {d.message}" for d in found)
        raise PassError(text or f"pdg-split-over-workers could not split '{dim}'")
