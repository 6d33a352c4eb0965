"""pdg.all_gather, pdg.reduce_scatter and pdg.shift compiled, on two ranks
(run by tools/test.sh under `mpiexec -n 2`): each rank's outputs equal the
interpreter's, which runs every rank's points in one process, at that
rank's point. One program, compiled once by rank 0; every rank makes the
same collective calls before it asserts anything."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

MPI = pytest.importorskip("mpi4py.MPI")
from rank_zero import compiled_programs  # noqa: E402

comm = MPI.COMM_WORLD
RANKS = comm.Get_size()
RANK = comm.Get_rank()


def exchange_program():
    """Over a worker dim w and a small dim b: x's rows gathered, y's blocks
    summed and maxed over the ranks (each rank keeping its block), and x
    shifted one rank up and one down (the last rank's point wraps)."""
    import pdg.frontend as pf
    from pdg.frontend import ops

    prog = pf.Program("exchange")
    w = prog.dim("w", world="W")
    b = prog.dim("b", 2)
    x = prog.input("x", (3,), "f64", domain=[w, b])
    y = prog.input("y", (RANKS, 4), "f32", domain=[w])
    k = prog.input("k", (RANKS,), "i64", domain=[w])
    rows = pf.all_gather(x * 1.0, over=w)  # (W, 3): read, as outputs take fixed shapes
    prog.output("rows_sum", pf.sum(rows, axis=0))
    prog.output("rows_max", ops.max(rows, axis=0))
    prog.output("sum", pf.reduce_scatter(y * 1.0, over=w))
    prog.output("max", pf.reduce_scatter(k + 0, over=w, op="max"))
    prog.output("next", pf.shift(x * 1.0, over=w, by=1))
    prog.output("back", pf.shift(x * 1.0, over=w, by=-1))
    return prog


def every_ranks_inputs():
    rng = np.random.default_rng(7)
    return {
        "x": rng.standard_normal((RANKS, 2, 3)),
        "y": rng.standard_normal((RANKS, RANKS, 4)).astype(np.float32),
        "k": rng.integers(-50, 50, (RANKS, RANKS)),
    }


@pytest.fixture(scope="module")
def artifact():
    with compiled_programs({"exchange": exchange_program}) as paths:
        yield paths["exchange"]


def test_runs_on_two_ranks():
    assert RANKS == 2, "run under mpiexec -n 2"


def test_each_rank_gets_what_the_interpreter_gives_it(artifact):
    import pdg.runtime
    from pdg.interpreter import interpret

    everyone = every_ranks_inputs()
    mine = {name: a[RANK : RANK + 1] for name, a in everyone.items()}
    got = pdg.runtime.load(artifact).run(mine, {}, comm=comm).outputs
    want = interpret(exchange_program().build(), everyone, symbols={"W": RANKS}).outputs
    calls = comm.allgather(sorted(got))  # every rank ran, whatever it asserts
    assert calls[0] == calls[-1]
    for name in ("rows_sum", "rows_max"):  # over [b]: the same on every rank
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12)
    np.testing.assert_allclose(got["rows_sum"], everyone["x"].sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(got["rows_max"], everyone["x"].max(axis=0))
    for name in ("sum", "max", "next", "back"):  # over [w, ...]: this rank's point
        np.testing.assert_allclose(got[name], np.asarray(want[name])[RANK : RANK + 1], rtol=1e-6)
    np.testing.assert_array_equal(got["next"][0], everyone["x"][(RANK - 1) % RANKS])
    np.testing.assert_array_equal(got["back"][0], everyone["x"][(RANK + 1) % RANKS])
    np.testing.assert_array_equal(got["max"][0], everyone["k"][:, RANK].max())
