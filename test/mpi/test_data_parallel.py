"""Compiled collectives on two ranks: run by tools/test.sh as

    mpiexec -n 2 .venv/bin/python -m pytest test/mpi

Each rank runs this file; the compiled programs are compiled once, by rank
0, and every rank runs them on MPI.COMM_WORLD with its own inputs. Every
test makes the same collective calls on every rank, in the same order,
before it asserts anything (an assertion failing on one rank must not
leave the other waiting)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from data_parallel_programs import shard, training_inputs, training_steps  # noqa: E402

MPI = pytest.importorskip("mpi4py.MPI")
from rank_zero import compiled_programs  # noqa: E402

comm = MPI.COMM_WORLD
RANKS = comm.Get_size()
RANK = comm.Get_rank()


@pytest.fixture(scope="module")
def artifacts():
    builds = {
        "dp": lambda: training_steps(world=True),
        "whole": lambda: training_steps(world=False),
        "ops": ops_program,
    }
    with compiled_programs(builds) as paths:
        yield paths


def ops_program():
    import pdg.frontend as pf

    prog = pf.Program("ops")
    w = prog.dim("w", world="W")
    x = prog.input("x", (3,), "f64", domain=[w])
    r = prog.coordinate(w)
    local = prog.recurrent((), "i64", domain=[w], name="local")
    local[w == 0] = r + 10
    local[w > 0] = r
    prog.output("sum", pf.all_reduce(x * 1.0, over=w))
    prog.output("max", pf.all_reduce(x * 1.0, over=w, op="max"))
    prog.output("from_last", pf.broadcast(x * 1.0, over=w, root=RANKS - 1))
    prog.output("ranks", pf.all_reduce(local, over=w))
    return prog


def test_runs_on_two_ranks():
    assert RANKS == 2, "run under mpiexec -n 2"


def test_data_parallel_steps_equal_one_process_over_the_whole_batch(artifacts):
    import pdg.runtime

    inputs = training_inputs(ranks=RANKS, per_rank=5)
    symbols = {"I": 4, "B": 5}
    mine = pdg.runtime.load(artifacts["dp"]).run(shard(inputs, RANK, RANKS), symbols, comm=comm)
    whole = pdg.runtime.load(artifacts["whole"]).run(inputs, {"I": 4, "B": 5 * RANKS})
    everyone = comm.allgather(np.array(mine.outputs["wt"]))
    np.testing.assert_allclose(mine.outputs["wt"], whole.outputs["wt"], rtol=1e-5, atol=1e-6)
    for other in everyone:  # every rank took the same steps, to the bit
        np.testing.assert_array_equal(other, everyone[0])


def test_sum_max_broadcast_and_the_rank_coordinate(artifacts):
    import pdg.runtime

    x = np.array([[RANK, -RANK, 2.5 * RANK]], np.float64)
    got = pdg.runtime.load(artifacts["ops"]).run({"x": x}, {}, comm=comm).outputs
    ranks = np.arange(RANKS, dtype=np.float64)
    np.testing.assert_array_equal(got["sum"], [ranks.sum(), -ranks.sum(), 2.5 * ranks.sum()])
    np.testing.assert_array_equal(got["max"], [RANKS - 1, 0, 2.5 * (RANKS - 1)])
    last = RANKS - 1
    np.testing.assert_array_equal(got["from_last"], [last, -last, 2.5 * last])
    assert int(got["ranks"]) == 10 + sum(range(1, RANKS))
