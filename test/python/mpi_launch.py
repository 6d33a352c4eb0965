"""Starting programs on several MPI ranks from the tests: the `mpi` extra's
mpiexec (Open MPI's wheel puts it beside the venv's python), with what it
needs in a container run as root. Tests skip where the extra is missing."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def mpiexec() -> str | None:
    """The mpiexec of this venv (the `mpi` extra), or None."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpiexec")


def has_mpi() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return mpiexec() is not None


def mpi_env() -> dict[str, str]:
    """The environment for mpiexec: Open MPI refuses to run as root unless
    told twice; one thread per rank keeps two ranks from fighting over
    two cores."""
    env = dict(os.environ)
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        PDG_NUM_THREADS="1",
    )
    return env


def mpi_command(ranks: int, *args: str) -> list[str]:
    """mpiexec -n RANKS ARGS..., with slots for more ranks than cores."""
    exe = mpiexec()
    assert exe is not None
    return [exe, "-n", str(ranks), "--oversubscribe", *args]
