"""Collectives compiled, on one process (the runs on several ranks are in
test/mpi/, under mpiexec): without a communicator a program is a world of
one rank, where an all-reduce is a copy, and the runtime refuses what
would silently compute the wrong thing."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from data_parallel_programs import shard, training_inputs, training_steps
from pdg.interpreter import interpret
from pdg.lowering.artifact import CompileError, compile_module
from pdg.runtime import RunError


@pytest.fixture(scope="module")
def dp_program(tmp_path_factory):
    path = tmp_path_factory.mktemp("dp") / "dp.pdgx"
    compile_module(training_steps(world=True).build(), path, gpu=False)
    return pdg.runtime.load(path)


def test_a_world_of_one_takes_the_whole_batchs_steps(dp_program):
    inputs = training_inputs(ranks=1, per_rank=5)
    want = interpret(training_steps(world=False).build(), inputs, symbols={"I": 4, "B": 5})
    got = dp_program.run(shard(inputs, 0, 1), symbols={"I": 4, "B": 5})
    np.testing.assert_allclose(got.outputs["wt"], want.outputs["wt"], rtol=1e-5, atol=1e-6)


def test_the_manifest_marks_the_worker_symbol_and_the_collective(dp_program):
    manifest = dp_program.manifest
    world = [s for s in manifest["symbols"] if s["name"] == "W"]
    assert world == [{"name": "W", "dim": "w", "kind": "launch", "max": None, "worker": True}]
    (site,) = manifest["abi"]["collectives"]
    assert (site["value"], site["op"], site["over"]) == ("g", "all_reduce", "w")


def test_the_world_size_is_not_the_callers_to_give(dp_program):
    inputs = shard(training_inputs(ranks=1, per_rank=2), 0, 1)
    with pytest.raises(RunError, match="symbol W is the number of ranks"):
        dp_program.run(inputs, symbols={"I": 2, "B": 2, "W": 2})


def test_inputs_over_the_worker_dim_are_this_ranks_share(dp_program):
    inputs = training_inputs(ranks=2, per_rank=2)
    whole = {"x": inputs["x"][None].reshape(2, 2, -1), "w0": inputs["w0"]}
    with pytest.raises(
        RunError, match=r"input x has shape \[2, 2, 8\], the program takes \[1, 2, 8\]"
    ):
        dp_program.run(whole, symbols={"I": 2, "B": 2})


def test_a_rank_started_by_mpiexec_needs_the_communicator(dp_program, monkeypatch):
    """Without comm, each of mpiexec's ranks would be a world of its own and
    silently train on its share alone."""
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    inputs = shard(training_inputs(ranks=1, per_rank=2), 0, 1)
    with pytest.raises(RunError, match="one rank of 2 .* pass comm=MPI.COMM_WORLD"):
        dp_program.run(inputs, symbols={"I": 2, "B": 2})


def test_without_mpi4py_the_refusal_names_the_extra(dp_program, monkeypatch):
    import pdg.runtime.mpi

    monkeypatch.setenv("PMI_SIZE", "4")
    monkeypatch.setattr(pdg.runtime.mpi, "_has_mpi4py", lambda: False)
    inputs = shard(training_inputs(ranks=1, per_rank=2), 0, 1)
    with pytest.raises(RunError, match=r"mpi4py is not installed: pip install -e '\.\[mpi\]'"):
        dp_program.run(inputs, symbols={"I": 2, "B": 2})


def test_comm_must_be_a_communicator(dp_program):
    pytest.importorskip("mpi4py")
    inputs = shard(training_inputs(ranks=1, per_rank=2), 0, 1)
    with pytest.raises(RunError, match="comm must be an mpi4py communicator"):
        dp_program.run(inputs, symbols={"I": 2, "B": 2}, comm="world")


def test_a_body_and_a_condition_see_the_rank_along_the_worker_dim(tmp_path):
    """Stores hold one point along the worker dim (index 0), but the
    coordinate a body or a case reads is the rank: 0 in a world of one."""
    prog = pf.Program("rank")
    w = prog.dim("w", world="W")
    r = prog.coordinate(w)
    first = prog.recurrent((), "i64", domain=[w], name="first")
    first[w == 0] = r + 10
    first[w > 0] = r
    prog.output("sum", pf.all_reduce(first, over=w))
    compile_module(prog.build(), tmp_path / "r.pdgx", gpu=False)
    got = pdg.runtime.load(tmp_path / "r.pdgx").run({}, symbols={})
    assert int(got.outputs["sum"]) == 10


def test_gather_scatter_and_shift_in_a_world_of_one(tmp_path):
    """One rank: the all-gather's slot has one row (W = 1, stored with the
    result's size; an output of symbolic shape is not compiled yet, so a
    sum over its rows reads it), the reduce-scatter's one block is its own
    sum and a shift by any distance lands on the rank itself."""
    prog = pf.Program("rank_ops")
    w = prog.dim("w", world="W")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (2, 3), "f32", domain=[w, b])
    y = prog.input("y", (1, 4), "i32", domain=[w])
    prog.output("rows", pf.sum(pf.all_gather(x * 2.0, over=w), axis=0))
    prog.output("block", pf.reduce_scatter(y + 1, over=w))
    prog.output("shifted", pf.shift(x * 1.0, over=w, by=-3))
    compile_module(prog.build(), tmp_path / "o.pdgx", gpu=False)
    x = np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3)
    y = np.array([[[1, 2, 3, 4]]], np.int32)
    program = pdg.runtime.load(tmp_path / "o.pdgx")
    got = program.run({"x": x, "y": y}, symbols={"B": 4}).outputs
    want = interpret(prog.build(), {"x": x, "y": y}, symbols={"W": 1, "B": 4}).outputs
    np.testing.assert_array_equal(got["rows"], want["rows"])
    np.testing.assert_array_equal(got["rows"], 2 * x[0])
    np.testing.assert_array_equal(got["block"], [[2, 3, 4, 5]])
    np.testing.assert_array_equal(got["shifted"], x)
    sites = program.manifest["abi"]["collectives"]
    assert [c["op"] for c in sites] == ["all_gather", "reduce_scatter", "shift"]


def test_a_reduce_scatter_with_more_blocks_than_ranks_stops_the_run(tmp_path):
    prog = pf.Program("blocks")
    w = prog.dim("w", world="W")
    y = prog.input("y", (2, 4), "f32", domain=[w])
    prog.output("mine", pf.reduce_scatter(y * 1.0, over=w))
    compile_module(prog.build(), tmp_path / "b.pdgx", gpu=False)
    with pytest.raises(RunError, match="has 2 blocks of ranks, but the run has 1 rank"):
        pdg.runtime.load(tmp_path / "b.pdgx").run({"y": np.zeros((1, 2, 4), np.float32)}, {})


def test_a_collective_of_symbolic_shape_is_refused_at_the_op(tmp_path):
    """An all-gather's rows (W of them) handed on over the worker dim: a
    point of symbolic shape, which the compiled collectives do not take."""
    prog = pf.Program("symbolic")
    w = prog.dim("w", world="W")
    x = prog.input("x", (2,), "f32", domain=[w])
    rows = pf.all_gather(x * 1.0, over=w)
    again = prog.recurrent((None, 2), "f32", domain=[w], name="again")
    again[...] = rows * 1.0
    prog.output("shifted", pf.shift(again, over=w).named("shifted"))
    with pytest.raises(CompileError, match="'shifted': the compiled collectives take points of a"):
        compile_module(prog.build(), tmp_path / "s.pdgx", gpu=False)
