"""`pdg run` started by mpiexec: one rank of an SPMD run per process.

Each rank runs the artifact on MPI.COMM_WORLD with its own files: `{rank}`
in --inputs and --out is replaced by the rank's number. A mistake found on
one rank before or during the run stops every rank (MPI_Abort), since the
others would wait for it in their first collective."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from pdg.cli.common import UserError
from pdg.runtime.mpi import INSTALL, World, launched_size, report_and_abort, world_of

RANK_FIELD = "{rank}"


def launched_world() -> World:
    """This process's world: one rank unless mpiexec started several."""
    size = launched_size()
    if not size or size < 2:
        return World()
    try:
        from mpi4py import MPI
    except ImportError:
        raise UserError(
            f"mpiexec started {size} ranks, and running on them needs mpi4py: {INSTALL}"
        ) from None
    return world_of(MPI.COMM_WORLD)


def per_rank(path: str | None, world: World, option: str, writes: bool = False) -> str | None:
    """`path` with {rank} replaced. Several ranks writing one file would
    overwrite each other's outputs, so --out needs the field there."""
    if path is None:
        return None
    if RANK_FIELD in path:
        return path.replace(RANK_FIELD, str(world.rank))
    if writes and world.size > 1:
        raise UserError(
            f"{option} {path}: each of the {world.size} ranks writes its outputs; put "
            f"{RANK_FIELD} in the name, e.g. out{RANK_FIELD}.npz"
        )
    return path


@contextmanager
def stopping_every_rank(world: World) -> Iterator[None]:
    """A failure on this rank ends the run on every rank."""
    try:
        yield
    except UserError as e:  # the user's mistake: its message, no type name
        if world.size > 1:
            print(
                f"pdg: rank {world.rank} of {world.size}: {e}; stopping every rank",
                file=sys.stderr,
                flush=True,
            )
            world.abort(1)
        raise
    except BaseException as e:
        report_and_abort(world, e)  # returns only in a world of one
        raise
