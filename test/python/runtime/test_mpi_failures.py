"""A rank that fails stops every rank, with a clear error, in bounded time:
two ranks under mpiexec, one of which fails while the other waits in a
compiled all-reduce for it. Skipped without the `mpi` extra."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pdg.frontend as pf
import pytest
from mpi_launch import has_mpi, mpi_command, mpi_env
from pdg.lowering.artifact import compile_module

pytestmark = pytest.mark.skipif(not has_mpi(), reason="needs the mpi extra (mpi4py, mpiexec)")

RANK = Path(__file__).with_name("mpi_failing_rank.py")
BOUND = 30.0  # seconds from start to every rank gone


@pytest.fixture(scope="module")
def artifact(tmp_path_factory) -> Path:
    prog = pf.Program("fails")
    w = prog.dim("w", world="W")
    x = prog.input("x", (4,), "f32", domain=[w])
    scored = prog.udf(lambda a: a, [x], shape=(4,), name="score")
    prog.output("total", pf.all_reduce(scored, over=w))
    path = tmp_path_factory.mktemp("mpi") / "fails.pdgx"
    compile_module(prog.build(), path, gpu=False)
    return path


def run_ranks(
    artifact: Path, mode: str, via_mpi4py: bool = True
) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    # `python -m mpi4py`: an exception nothing catches ends every rank
    # (MPI_Abort) instead of leaving the others waiting.
    python = [sys.executable, "-m", "mpi4py"] if via_mpi4py else [sys.executable]
    command = mpi_command(2, *python, str(RANK), str(artifact), mode)
    done = subprocess.run(command, env=mpi_env(), capture_output=True, text=True, timeout=3 * BOUND)
    return done, time.monotonic() - start


def test_both_ranks_finish_when_none_fails(artifact):
    done, _ = run_ranks(artifact, "none")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("finished") == 2
    assert "[2. 2. 2. 2.]" in done.stdout  # each rank's ones, summed over two ranks


def test_a_rank_raising_before_its_run_stops_the_waiting_rank(artifact):
    done, seconds = run_ranks(artifact, "raise")
    assert done.returncode != 0
    assert seconds < BOUND
    assert "rank 1 failed before its run" in done.stderr
    assert "finished" not in done.stdout


def test_a_udf_failing_on_one_rank_stops_every_rank(artifact):
    """The runtime's own stop path: without `-m mpi4py` (and without it,
    checked by hand: the waiting rank hung until the timeout)."""
    done, seconds = run_ranks(artifact, "udf", via_mpi4py=False)
    assert done.returncode != 0
    assert seconds < BOUND
    assert (
        "pdg: rank 1 of 2: RunError: udf 'score' raised ValueError: no score on rank 1 "
        "(computing 'score' at w=1)" in done.stderr
    )
    assert "stopping every rank (MPI_Abort)" in done.stderr
    assert "finished" not in done.stdout


def test_inputs_refused_on_one_rank_stop_every_rank(artifact):
    done, seconds = run_ranks(artifact, "shape", via_mpi4py=False)
    assert done.returncode != 0
    assert seconds < BOUND
    assert "pdg: rank 1 of 2: RunError: input x has shape [1, 5], the program takes [1, 4]" in (
        done.stderr
    )
    assert "finished" not in done.stdout
