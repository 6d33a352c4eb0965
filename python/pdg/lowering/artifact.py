"""`pdg compile`: a pdg program to an artifact directory (see
pdg.runtime.manifest for its layout). Optimizes the graph, plans storage,
schedules, lowers to loops, to LLVM and to a shared library, and writes
the manifest. Each phase is timed; the times are returned, never written
into the artifact (it must be byte-identical across compilations)."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir

from pdg import __version__, _ext
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import peak, report_lines, stores_of
from pdg.ir.source import format_location
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.passes.registry import PassError
from pdg.runtime.formula import formula, to_json
from pdg.runtime.manifest import (
    FORMAT_VERSION,
    LIBRARY,
    MANIFEST,
    dump,
    host_target,
    sha256,
)

from .buffers import GROW_FROM
from .gpu import kernels_ptx
from .lower import lower_to_loops
from .native import build_library, to_llvm
from .trampolines import trampolines_source

# Whole-graph optimization and planning before the lowering ({vectorize}:
# pdg-vectorize or nothing).
OPTIMIZE = (
    "builtin.module(pdg-dedup,pdg-dce,canonicalize,pdg-contract-reductions,"
    "{vectorize}canonicalize,pdg-fuse,pdg-plan-storage,pdg-schedule)"
)


class CompileError(Exception):
    """The program cannot be compiled; `diagnostics` hold located messages."""

    def __init__(self, message: str, diagnostics: list | None = None):
        super().__init__(message)
        self.diagnostics = diagnostics or []


@dataclass
class Compiled:
    path: Path
    manifest: dict
    seconds: dict[str, float] = field(default_factory=dict)


def compile_module(
    module: ir.Module,
    out: Path,
    gpu: bool = True,
    vectorize: bool | str = False,
    check_indices: bool = True,
) -> Compiled:
    """Compiles the single pdg.graph of `module` into the artifact `out`
    (a directory, replaced if it exists); with `gpu`, also PTX kernels of
    the node bodies for each architecture in pdg.lowering.gpu; with
    `vectorize`, a batch dim (`True`: `b`, or the dim's name) is folded into
    the point type first. `check_indices=False` drops the bounds checks of
    reads at data-dependent indices (a bad token id then reads outside its
    table): only to measure what they cost."""
    graphs = [op for op in module.body.operations if op.operation.name == "pdg.graph"]
    if len(graphs) != 1:
        raise CompileError(
            f"the module holds {len(graphs)} pdg.graph ops; an artifact holds exactly one "
            "program (split the module, one graph per file)"
        )
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now

    if vectorize and not (vectorize is True or str(vectorize).isidentifier()):
        raise CompileError(f"vectorize names a dim, got {vectorize!r}")
    folded = "b" if vectorize is True else vectorize
    pipeline = OPTIMIZE.format(vectorize=f"pdg-vectorize{{dim={folded}}}," if vectorize else "")
    errors = run_pipeline(module, parse_pipeline(pipeline))
    if errors:
        raise CompileError("\n".join(d.render() for d in errors), errors)
    graph = read_graph(graphs[0].operation)
    description = _describe(graph)
    # The graph is gone after the lowering: each node's domain and location.
    nodes = {v.name: (list(v.domain), format_location(v.op.location)) for v in graph.values}
    lap("optimize, plan, schedule")
    try:
        (abi,) = lower_to_loops(module)
    except PassError as e:
        where = f"{format_location(e.location)}: " if e.location is not None else ""
        raise CompileError(f"{where}error: {e}") from None
    lap("lower to loops")
    ptx, kernel_count = kernels_ptx(str(module), module.context) if gpu else ({}, 0)
    lap("GPU kernels (PTX)")
    checks = to_llvm(module, check_indices)
    for check in checks:  # a fault reports the node's point and where it was written
        check["domain"], check["location"] = nodes.get(check["value"], ([], ""))
    lap("lower to LLVM")
    description = {"abi": abi.to_json(), **description, "index_checks": checks}
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    build_library(module, out / LIBRARY, trampolines_source(abi.udfs, abi.grow, description))
    lap("native code")
    parts = [LIBRARY]
    if ptx:
        (out / "kernels").mkdir()
        for chip, text in sorted(ptx.items()):
            (out / "kernels" / f"{chip}.ptx").write_text(text)
            parts.append(f"kernels/{chip}.ptx")
    manifest = {
        "format": FORMAT_VERSION,
        "pdg_version": __version__,
        "mlir_version": _ext.MLIR_VERSION,
        "target": host_target(),
        **description,
        "kernels": {"count": kernel_count, "architectures": sorted(ptx)},
        "parts": {name: sha256(out / name) for name in parts},
    }
    (out / MANIFEST).write_text(dump(manifest))
    return Compiled(out, manifest, seconds)


def _describe(graph) -> dict:
    """Symbols, stores with symbolic sizes, and udfs, for the manifest."""
    symbols = []
    for dim in graph.dims.values():
        if dim.symbol:
            symbol = {"name": dim.symbol, "dim": dim.name, "kind": dim.kind, "max": dim.size}
            if dim.kind == "dynamic":  # the steps its growable stores start with
                symbol["grow_from"] = GROW_FROM if dim.size is None else min(GROW_FROM, dim.size)
            symbols.append(symbol)
    planned = stores_of(graph)
    lines = report_lines(planned)
    stores = [
        {
            "value": s.value.name,
            "kind": s.kind,
            "extents": s.extents,
            "point": s.point_factors,
            "element": s.value.element,
            "bytes": to_json(line.monomials),
        }
        for s, line in zip(planned, lines, strict=True)
    ]
    total = peak(lines)
    memory = {"peak": to_json(total), "formula": formula(total)}
    udfs = sorted(
        {ir.StringAttr(v.op.attributes["callee"]).value for v in graph.values if v.kind == "udf"}
    )
    return {
        "graph": graph.name,
        "symbols": symbols,
        "stores": stores,
        "memory": memory,
        "udfs": udfs,
    }
