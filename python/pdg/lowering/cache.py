"""Artifacts compiled once and reused: an opt-in cache directory keyed by
content.

A program is compiled ahead of time; a training run only loads what was
compiled. With a cache directory, the artifact of a program is found by a
key over everything that decides the compiled code (the program's text,
the compile options, the host, pdg's version and its compiler's own
files), so a later process (the next run, a benchmark's timed run) loads
it without compiling: no compiler in that process's time or memory. A
changed program or compiler gives another key; old entries are left to
whoever owns the directory. A damaged entry (a part whose sha256 differs
from its manifest's) is compiled again. Finding an entry loads no MLIR (its
libraries alone take some 80 MiB of a process's memory); only compiling
does."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pdg import __version__
from pdg.atomic_files import discard
from pdg.frontend import Program
from pdg.runtime.manifest import ArtifactError, host_target, read_manifest

from .toolchain import blas_library, c_runtime

PACKAGE = Path(__file__).resolve().parents[1]


@dataclass
class Built:
    path: Path  # the artifact
    seconds: float  # compiling it; 0 when it came from the cache
    cached: bool
    # compile_module's phases and, within native code, its tools (seconds);
    # empty when it came from the cache
    phases: dict[str, float] = field(default_factory=dict)


def build_artifact(
    program: Program,
    name: str,
    workdir: Path,
    cache: Path | None = None,
    vectorize: bool | str = False,
    split_over: str | None = None,
    batch_steps: bool = False,
) -> Built:
    """The CPU artifact of `program`: compiled into workdir/<name>.pdgx, or
    with `cache`, found there (or compiled into it) by its key.
    `split_over`: a launch dim that the compiled program splits over a
    worker dim (pdg.passes.data_parallel.split_over_workers), the
    data-parallel program of several ranks; part of the key, as is
    `batch_steps` (compile_module's)."""
    start = time.perf_counter()
    if cache is None:
        path = Path(workdir) / f"{name}.pdgx"
        phases = _compile(program, path, vectorize, split_over, batch_steps)
        return Built(path, time.perf_counter() - start, False, phases)
    text = program.to_mlir()
    # The split is a pass over this text: the text, the option and the
    # compiler's files (in the key) decide it.
    options = f"gpu=False vectorize={vectorize} split_over={split_over}"
    key = _key(text, options + (" batch_steps=True" if batch_steps else ""))
    path = Path(cache) / f"{name}-{key}.pdgx"
    try:
        read_manifest(path, __version__)  # every part's sha256, not only that it exists
        return Built(path, 0.0, True)
    except ArtifactError:
        pass
    if os.path.lexists(path):  # a damaged entry: compiled again
        discard(path)
    # compile_module writes beside and renames into place: a reader never
    # sees half an entry, and of two processes compiling the same key the
    # last one's (identical) artifact stays.
    phases = _compile(program, path, vectorize, split_over, batch_steps)
    return Built(path, time.perf_counter() - start, False, phases)


def _compile(
    program: Program,
    path: Path,
    vectorize: bool | str,
    split_over: str | None,
    batch_steps: bool = False,
) -> dict[str, float]:
    """Compiles; returns the phases' and tools' seconds (Built.phases)."""
    from .artifact import compile_module  # MLIR: only when compiling

    module = program.build()
    if split_over is not None:
        from pdg.passes.data_parallel import split_over_workers

        split_over_workers(module, split_over)
    compiled = compile_module(
        module, path, gpu=False, vectorize=vectorize, batch_steps=batch_steps
    )
    return compiled.seconds | compiled.tool_seconds


def _key(text: str, options: str) -> str:
    h = hashlib.sha256()
    for part in (__version__, host_target(), options, _compiler_files(), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


_FINGERPRINT: list[str] = []


def _compiler_files() -> str:
    """A digest of the compiler itself: its Python sources' contents, its
    native extension's size and time, and the C runtime every program links
    (an edited checkout, or another MLIR, compiles anew without a version
    bump), and the BLAS library that large products call, if any."""
    if not _FINGERPRINT:
        h = hashlib.sha256()
        for f in sorted(PACKAGE.rglob("*.py")):
            h.update(f.relative_to(PACKAGE).as_posix().encode() + f.read_bytes())
        # The dialect and C++ passes, built against one MLIR (installed apart
        # from the sources when the install is editable; found, not loaded).
        stat = Path(importlib.util.find_spec("pdg._pdg_ext").origin).stat()
        h.update(f"{stat.st_size} {stat.st_mtime_ns}".encode())
        archive, include = c_runtime()
        h.update(archive.read_bytes() + (include / "pdg" / "runtime.h").read_bytes())
        # Whether large products call a BLAS, and which (pdg-call-blas).
        h.update(str(blas_library()).encode())
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def default_cache() -> Path:
    """Where compiled artifacts are cached unless told otherwise:
    $PDG_CACHE, else $XDG_CACHE_HOME/pdg, else ~/.cache/pdg."""
    if os.environ.get("PDG_CACHE"):
        return Path(os.environ["PDG_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pdg"
