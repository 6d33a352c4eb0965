"""Programs the MPI tests run, compiled once by rank 0 into a directory
every rank reads."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from mpi4py import MPI

comm = MPI.COMM_WORLD


def compiled(name: str, build) -> Path:
    """`build()`'s program (a pf.Program) compiled by rank 0; an error
    there is raised on every rank, so no rank waits for the others."""
    from pdg.lowering.artifact import compile_module

    path = error = None
    if comm.Get_rank() == 0:
        try:
            path = Path(tempfile.mkdtemp(prefix="pdg-mpi-")) / f"{name}.pdgx"
            compile_module(build().build(), path, gpu=False)
        except Exception as e:  # every rank must hear of it
            error = f"{type(e).__name__}: {e}"
    path, error = comm.bcast((path, error), root=0)
    if error:
        raise RuntimeError(f"rank 0 could not compile {name}: {error}")
    return path


@contextmanager
def compiled_programs(builds: Mapping[str, Callable]) -> Iterator[dict[str, Path]]:
    """Each build compiled by rank 0 (`compiled`), by name; their
    directories removed once every rank is done with them."""
    paths = {name: compiled(name, build) for name, build in builds.items()}
    try:
        yield paths
    finally:
        comm.Barrier()
        if comm.Get_rank() == 0:
            for p in paths.values():
                shutil.rmtree(p.parent, ignore_errors=True)
