"""Binding a run to an MPI communicator (the C side: runtime/lib/mpi.c).

A program with collectives runs one rank per process, each process calling
`program.run(..., comm=MPI.COMM_WORLD)` with its own share of the inputs.
The runtime tells the library which libmpi mpi4py loaded and the handles of
the communicator, datatypes and operations; program.so looks MPI's
functions up in it, so it neither links MPI nor needs it to load.

Without `comm` a program is a world of one rank, where every collective is
a copy. A process that mpiexec started as one of several ranks is refused
that (it would compute a world of its own, silently): it must pass comm.

mpi4py is the `mpi` extra's (`pip install -e '.[mpi]'`), imported only when
a run has a communicator."""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path

INSTALL = "pip install -e '.[mpi]' (mpi4py and an MPI library)"
# Set by mpiexec in each rank it starts (Open MPI, MPICH/Hydra, Slurm's PMI).
LAUNCH_SIZE = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")
# pdg/runtime.h: PDG_ELEMENT_F32, ..., and the reductions in order.
ELEMENT_TYPES = ("FLOAT", "DOUBLE", "INT32_T", "INT64_T")
REDUCTIONS = ("SUM", "MAX")


class MpiError(Exception):
    """MPI is missing, or the communicator cannot be used."""


@dataclass
class World:
    """This process's place in the run: rank and size, and what the library
    needs to call MPI (None for a world of one)."""

    rank: int = 0
    size: int = 1
    comm: object = None  # the mpi4py communicator
    library: str | None = None
    handles: tuple = ()  # (comm, types, ops) as ctypes values

    def abort(self, code: int = 1) -> None:
        """Ends every rank of the run (MPI_Abort): after a failure on this
        rank the others would wait forever in their next collective."""
        if self.comm is not None and self.size > 1:
            self.comm.Abort(code)


def launched_size() -> int | None:
    """The number of ranks mpiexec started, if it started this process."""
    for name in LAUNCH_SIZE:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def world_of(comm) -> World:
    """The World of a run given `comm` (an mpi4py communicator, or None)."""
    if comm is None:
        launched = launched_size()
        if launched and launched > 1:
            raise MpiError(
                f"this process is one rank of {launched} (started by mpiexec), but the run "
                "was given no communicator: pass comm=MPI.COMM_WORLD (from mpi4py import MPI)"
                + ("" if _has_mpi4py() else f"; mpi4py is not installed: {INSTALL}")
            )
        return World()
    try:
        from mpi4py import MPI
    except ImportError:
        raise MpiError(f"running on a communicator needs mpi4py: {INSTALL}") from None
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL:
        raise MpiError(f"comm must be an mpi4py communicator (e.g. MPI.COMM_WORLD), got {comm!r}")
    if comm.Is_inter():
        raise MpiError("comm is an intercommunicator; pass an intracommunicator")
    library = loaded_libmpi()
    if library is None:
        raise MpiError(
            "mpi4py is loaded but no libmpi is mapped into this process; reinstall the "
            f"MPI library: {INSTALL}"
        )
    handle = ctypes.c_ssize_t
    types = (handle * len(ELEMENT_TYPES))(*[MPI._handleof(getattr(MPI, t)) for t in ELEMENT_TYPES])
    ops = (handle * len(REDUCTIONS))(*[MPI._handleof(getattr(MPI, o)) for o in REDUCTIONS])
    handles = (handle(MPI._handleof(comm)), types, ops)
    return World(comm.Get_rank(), comm.Get_size(), comm, library, handles)


def loaded_libmpi() -> str | None:
    """The path of the libmpi shared library in this process (mpi4py's)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if Path(path).name.startswith("libmpi.so"):
            return path
    return None


def _has_mpi4py() -> bool:
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


class Binding:
    """Binds `library` (a loaded program.so) to `world` for one run."""

    def __init__(self, library: ctypes.CDLL, world: World):
        self.library = library
        self.world = world

    def __enter__(self) -> Binding:
        if self.world.library is None:
            return self
        bind = self.library.pdg_mpi_bind
        bind.argtypes = [
            ctypes.c_char_p,
            ctypes.c_ssize_t,
            ctypes.c_int64,
            ctypes.c_int64,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        bind.restype = ctypes.c_int32
        comm, types, ops = self.world.handles
        status = bind(
            os.fsencode(self.world.library),
            comm,
            self.world.rank,
            self.world.size,
            ctypes.cast(types, ctypes.c_void_p),
            ctypes.cast(ops, ctypes.c_void_p),
        )
        if status:
            why = {1: "does not open", 2: "lacks MPI_Allreduce or MPI_Bcast"}.get(
                status, "rejected the rank and size"
            )
            raise MpiError(f"the MPI library {self.world.library} {why}; {INSTALL}")
        return self

    def __exit__(self, *exc) -> None:
        if self.world.library is not None:
            self.library.pdg_mpi_unbind()


def report_and_abort(world: World, error: BaseException) -> None:
    """After a run failed on this rank: says so on stderr and ends every
    rank (the others would wait in their next collective)."""
    if world.size <= 1:
        return
    print(
        f"pdg: rank {world.rank} of {world.size}: {type(error).__name__}: {error}; "
        "stopping every rank (MPI_Abort)",
        file=sys.stderr,
        flush=True,
    )
    world.abort(1)
