"""`pdg compile`: a pdg program to an artifact directory (see
pdg.runtime.manifest for its layout). Optimizes the graph, plans storage,
schedules, lowers to loops, to LLVM and to a shared library, and writes
the manifest. Each phase is timed; the times are returned, never written
into the artifact (it must be byte-identical across compilations). The
files are written beside the output and swapped into place in one step
(writing_artifact), never over what pdg did not write (check_output)."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir

from pdg import __version__, _ext
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import peak, report_lines, stores_of
from pdg.atomic_files import clean_stale, pause_for_tests, replace_directory, scratch_path
from pdg.interrupts import deferred_interrupts
from pdg.ir.source import format_location
from pdg.passes import pipelines
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

from . import compile_cache
from .buffers import GROW_FROM
from .gpu import kernels_ptx
from .lower import lower_to_loops
from .native import build_library, to_llvm
from .toolchain import ToolchainError, blas_library
from .trampolines import grow_start_symbol, trampolines_source


class CompileError(Exception):
    """The program cannot be compiled; `diagnostics` hold located messages."""

    def __init__(self, message: str, diagnostics: list | None = None):
        super().__init__(message)
        self.diagnostics = diagnostics or []


class OutputError(CompileError):
    """The output path cannot take the artifact: it holds something that
    pdg did not make (replacing it would lose it), or cannot be written."""


@dataclass
class Compiled:
    path: Path
    manifest: dict
    seconds: dict[str, float] = field(default_factory=dict)
    # the native code phase by tool (mlir-translate, opt, llc, linking)
    tool_seconds: dict[str, float] = field(default_factory=dict)
    # copied from the compile cache ($PDG_COMPILE_CACHE), not compiled: no phases
    cached: bool = False


def compile_module(
    module: ir.Module,
    out: Path,
    gpu: bool = True,
    vectorize: bool | str = False,
    check_indices: bool = True,
    batch_steps: bool = False,
) -> Compiled:
    """Compiles the single pdg.graph of `module` into the artifact `out`
    (a directory; an artifact already there is replaced in one step, and
    anything else there is refused: see check_output); with `gpu`, also PTX
    kernels of the node bodies for each architecture in pdg.lowering.gpu; with
    `vectorize`, a batch dim (`True`: `b`, or the dim's name) is folded into
    the point type first. `check_indices=False` drops the bounds checks of
    reads at data-dependent indices (a bad token id then reads outside its
    table): only to measure what they cost. `batch_steps=True` makes a
    weight's gradient over a dynamic dim's steps one product over all the
    steps, not one per step (pipelines.optimize): only to measure it.
    Ctrl-C stops it at the end of a phase (pdg.lowering.interrupts). With
    $PDG_COMPILE_CACHE set, an artifact that any process compiled there
    from the same module and options is copied instead
    (pdg.lowering.compile_cache)."""
    out = Path(out)
    check_output(out)  # before the work, not only when writing
    with _toolchain_step("choose the BLAS"):  # $PDG_BLAS, read by the cache's key too
        blas_library()

    def compile_into_out() -> Compiled:
        with deferred_interrupts() as interrupts:
            return _compile(
                module, out, gpu, vectorize, check_indices, interrupts.check, batch_steps
            )

    cache = compile_cache.configured()
    if cache is None:
        return compile_into_out()
    options = (
        f"gpu={gpu} vectorize={vectorize} check_indices={check_indices} batch_steps={batch_steps}"
    )
    return compile_cache.compile_through(cache, module, out, options, compile_into_out)


def _compile(
    module: ir.Module,
    out: Path,
    gpu: bool,
    vectorize: bool | str,
    check_indices: bool,
    check_interrupt: Callable[[], None],
    batch_steps: bool = False,
) -> Compiled:
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
        check_interrupt()

    if vectorize and not (vectorize is True or str(vectorize).isidentifier()):
        raise CompileError(f"vectorize names a dim, got {vectorize!r}")
    folded = "b" if vectorize is True else vectorize
    optimize = pipelines.optimize(folded if vectorize else None, batch_steps)
    errors = run_pipeline(module, parse_pipeline(optimize))
    if errors:
        raise CompileError("\n".join(d.render() for d in errors), errors)
    graph = read_graph(graphs[0].operation)
    description, lines = _describe(graph)
    # The graph is gone after the lowering: each node's domain and location.
    nodes = {v.name: (list(v.domain), format_location(v.op.location)) for v in graph.values}
    lap("optimize, plan, schedule")
    try:
        (abi,) = lower_to_loops(module)
    except PassError as e:
        where = f"{format_location(e.location)}: " if e.location is not None else ""
        raise CompileError(f"{where}error: {e}") from None
    lap("lower to loops")
    with _toolchain_step("GPU kernels (PTX)"):
        ptx, kernel_count = kernels_ptx(str(module), module.context) if gpu else ({}, 0)
    lap("GPU kernels (PTX)")
    with _toolchain_step("lower to LLVM"):
        checks = to_llvm(module, check_indices)
    for check in checks:  # a fault reports the node's point and where it was written
        check["domain"], check["location"] = nodes.get(check["value"], ([], ""))
        others = check.pop("shared_by", [])
        if others:  # one function computes several nodes: name them all
            check["value"] += f" (or {', '.join(others)}: the same code)"
    lap("lower to LLVM")
    # Outputs returned as a slot, values updated in place and stores that
    # are an input's buffer have no bytes of their own.
    borrowed = {r["value"] for r in abi.returned} | {p["value"] for p in abi.in_place}
    borrowed |= {d["store"] for d in abi.donated}
    description["memory"] = _memory(lines, abi.shared, borrowed)
    description = {"abi": abi.to_json(), **description, "index_checks": checks}
    with writing_artifact(out) as scratch:
        grow_start = grow_start_symbol(abi.name)
        generated = trampolines_source(
            abi.udfs, abi.grow, grow_start, len(abi.grow_stores), description
        )
        with _toolchain_step("native code"):
            tools = build_library(module, scratch / LIBRARY, generated)
        lap("native code")
        pause_for_tests("artifact-library-written")
        parts = [LIBRARY]
        if ptx:
            (scratch / "kernels").mkdir()
            for chip, text in sorted(ptx.items()):
                (scratch / "kernels" / f"{chip}.ptx").write_text(text)
                parts.append(f"kernels/{chip}.ptx")
        manifest = {
            "format": FORMAT_VERSION,
            "pdg_version": __version__,
            "mlir_version": _ext.MLIR_VERSION,
            "target": host_target(),
            **description,
            "kernels": {"count": kernel_count, "architectures": sorted(ptx)},
            "parts": {name: sha256(scratch / name) for name in parts},
        }
        (scratch / MANIFEST).write_text(dump(manifest))
    return Compiled(out, manifest, seconds, tools)


@contextmanager
def _toolchain_step(step: str) -> Iterator[None]:
    """A native tool (mlir-translate, opt, llc, the linker) or an MLIR pass
    pipeline that fails in `step` is a CompileError naming both."""
    try:
        yield
    except ToolchainError as e:
        raise CompileError(f"compiling failed in step '{step}': {e}") from e
    except ir.MLIRError as e:
        raise CompileError(
            f"compiling failed in step '{step}': an MLIR pass pipeline failed: {e}"
        ) from e


# An artifact's own entries besides its parts (kernels/ holds PTX parts).
_ARTIFACT_ENTRIES = {MANIFEST, "kernels"}


def check_output(out: Path) -> None:
    """Raises OutputError unless `out` can take an artifact: nothing there,
    an empty directory, or an artifact that pdg wrote (a directory with a
    pdg manifest and nothing besides the artifact's own files). Never a
    file, a link, the current or parent directory, or a directory of
    someone's files: replacing those would lose them."""
    if out.name in ("", ".", ".."):
        raise OutputError(
            f"the output path '{out}' names an existing directory ('', '.' or '..'), not a "
            "new artifact; give the artifact its own directory, e.g. prog.pdgx"
        )
    ancestor = out.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"cannot write {out}: {ancestor} is not a directory")
    if out.is_symlink():
        raise OutputError(
            f"{out} is a symbolic link; pdg writes an artifact only where nothing is or "
            "where it wrote one before (remove the link, or give another path)"
        )
    if not os.path.lexists(out):
        return
    if not out.is_dir():
        raise OutputError(
            f"{out} is a file, not a pdg artifact; pdg will not replace it "
            "(remove it, or give another path)"
        )
    try:
        entries = sorted(p.name for p in out.iterdir())
    except OSError as e:
        raise OutputError(f"cannot read the directory {out}: {e.strerror}") from None
    if not entries:
        return
    parts = _manifest_parts(out / MANIFEST)
    if parts is None:
        raise OutputError(
            f"{out} is a directory that is not a pdg artifact (it has no pdg {MANIFEST}); "
            "pdg will not replace what it holds (give a new path, or empty it)"
        )
    foreign = [name for name in entries if name not in _ARTIFACT_ENTRIES | parts]
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise OutputError(
            f"{out} is a pdg artifact that also holds other files ({shown}); pdg will not "
            "replace them (move them out, or give another path)"
        )


def _manifest_parts(path: Path) -> set[str] | None:
    """The top-level names of the parts a pdg manifest lists; None if
    `path` is not a pdg manifest (missing, unreadable, or another JSON)."""
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(manifest, dict) or "format" not in manifest:
        return None
    if not isinstance(manifest.get("parts"), dict):
        return None
    return {str(name).split("/")[0] for name in manifest["parts"]}


@contextmanager
def writing_artifact(out: Path) -> Iterator[Path]:
    """A scratch directory beside `out` for the artifact's files. When the
    block ends without an error, the complete artifact replaces `out` in
    one step (a reader sees the old artifact or the new one, never a mix or
    nothing); after an error, Ctrl-C included, the scratch is removed and
    `out` is untouched. A scratch that a killed compile left in the same
    directory is removed first (see pdg.atomic_files)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create the directory {out.parent}: {e.strerror}") from None
    clean_stale(out.parent)
    check_output(out)
    scratch = scratch_path(out)
    try:
        scratch.mkdir()
    except OSError as e:
        raise OutputError(f"cannot write into {out.parent}: {e.strerror}") from None
    try:
        yield scratch
        pause_for_tests("artifact-complete")
        try:
            replace_directory(scratch, out, check_output)
        except OSError as e:
            raise OutputError(f"cannot put the artifact at {out}: {e.strerror}") from None
    finally:
        if os.path.lexists(scratch):
            shutil.rmtree(scratch, ignore_errors=True)


def _describe(graph) -> tuple[dict, list]:
    """Symbols, stores with symbolic sizes, and udfs, for the manifest;
    and the memory report's lines (see _memory)."""
    symbols = []
    for dim in graph.dims.values():
        if dim.symbol:
            symbol = {"name": dim.symbol, "dim": dim.name, "kind": dim.kind, "max": dim.size}
            if dim.worker:  # its value is the number of ranks (the runtime's to give)
                symbol["worker"] = True
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
    udfs = sorted(
        {ir.StringAttr(v.op.attributes["callee"]).value for v in graph.values if v.kind == "udf"}
    )
    return {
        "graph": graph.name,
        "symbols": symbols,
        "stores": stores,
        "udfs": udfs,
    }, lines


def _memory(lines: list, shared: dict, borrowed: set[str]) -> dict:
    """The plan's peak: every store, but those that take turns in the
    shared block (lowering/arena.py) count as the block's bytes once, and
    `borrowed` ones, in another value's store or an input's buffer
    (outputs returned as the slot they copied: returned_slots.py; values
    updated in place and donated inputs: updated_in_place.py), not at all."""
    in_block = set(shared["stores"]) | borrowed
    total = peak([line for line in lines if line.name not in in_block])
    if shared["bytes"]:
        total[()] = total.get((), 0) + shared["bytes"]
    memory = {"peak": to_json(total), "formula": formula(total)}
    if shared["stores"]:
        memory["shared"] = {"bytes": shared["bytes"], "apart": shared["apart"]}
    return memory
