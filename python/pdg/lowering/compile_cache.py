"""A compile cache that every compile of a process tree shares: with
$PDG_COMPILE_CACHE=<dir>, compile_module looks the module up there before
compiling it and keeps what it compiles there.

Where the artifact cache (cache.py) is asked for by the caller, this one
sits under compile_module itself, so that a program compiled by several
processes (the ranks of an mpiexec run, the workers of a test run, the
scripts a test starts) is compiled once. Its key covers everything that
decides the compiled code: the module's text with its locations (they go
into the manifest's index checks), the compile options, the host target,
pdg's version and compiler files (cache._key), the C compiler that links
and whether and from which size products call OpenBLAS. An artifact is
byte-identical across compilations, so a hit is a copy of the entry into
the output.

Concurrent compiles of one key (xdist workers, MPI ranks) take a lock on
the key: one compiles, the others wait and copy its entry. An entry is
written under a scratch name and renamed into place, so no reader sees
part of one; an entry whose parts' sha256 differ from its manifest's (a
damaged or partial one) is discarded and compiled again."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from mlir import ir

from pdg import __version__
from pdg.atomic_files import clean_stale, discard, scratch_path
from pdg.runtime.manifest import ArtifactError, read_manifest

if TYPE_CHECKING:
    from .artifact import Compiled

ENV = "PDG_COMPILE_CACHE"


def configured() -> Path | None:
    """The directory $PDG_COMPILE_CACHE names; None when unset or empty."""
    value = os.environ.get(ENV)
    return Path(value) if value else None


def key(module: ir.Module, options: str) -> str:
    """The entry's name for `module` compiled with `options` (before the
    compile, which changes the module in place)."""
    from . import native
    from .cache import _key
    from .toolchain import linker

    text = module.operation.get_asm(enable_debug_info=True)
    # Read at each compile, not once per process: what a test (or a user)
    # changes between compiles gives another key.
    extra = f"{options} cc={linker()} {native.code_settings()}"
    return _key(text, extra)


def compile_through(
    directory: Path,
    module: ir.Module,
    out: Path,
    options: str,
    compile_into_out: Callable[[], Compiled],
) -> Compiled:
    """The artifact of `module` at `out`: copied from the entry in
    `directory`, or compiled there by `compile_into_out` and then kept."""
    from .artifact import Compiled, OutputError, writing_artifact

    entry = Path(directory) / f"{key(module, options)}.pdgx"
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(
            f"cannot create the compile cache {entry.parent} (${ENV}): {e.strerror}"
        ) from None
    with _locked(entry.with_name(f".{entry.name}.lock")):
        try:
            manifest = read_manifest(entry, __version__)  # every part's sha256
        except ArtifactError:
            manifest = None
        if manifest is not None:
            with writing_artifact(out) as scratch:
                _copy_parts(entry, scratch)
            return Compiled(out, manifest, cached=True)
        if os.path.lexists(entry):  # damaged or partial: compiled again
            discard(entry)
        compiled = compile_into_out()
        _keep(out, entry)
        return compiled


def _copy_parts(source: Path, target: Path) -> None:
    for path in source.rglob("*"):
        copy = target / path.relative_to(source)
        if path.is_dir():
            copy.mkdir(exist_ok=True)
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)


def _keep(out: Path, entry: Path) -> None:
    """Copies the artifact `out` into the cache as `entry`: into a scratch
    beside it, then renamed into place. The cache is an optimization: a
    failure to write it leaves the compile's result alone."""
    clean_stale(entry.parent)
    scratch = scratch_path(entry)
    try:
        scratch.mkdir()
        _copy_parts(out, scratch)
        os.rename(scratch, entry)
    except OSError:
        pass
    finally:
        if os.path.lexists(scratch):
            shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on `path` (created if missing); waits for
    another process's, in steps short enough for Ctrl-C to stop it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock
