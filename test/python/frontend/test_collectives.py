"""Collectives in the frontend and the interpreter: pf.all_reduce,
pf.all_gather and pf.broadcast over a worker dim (`world=`), the IR they
build, the mistakes they refuse, and what they compute when the
interpreter runs every rank's points in one process."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pytest
from data_parallel_programs import shard, training_inputs, training_steps
from pdg.interpreter import interpret
from pdg.interpreter.errors import InterpreterError


def ranks_program(collective: str, point: tuple = (2,), **kwargs) -> pf.Program:
    """out = collective(2 * x) over w, x of shape `point` at each [w, b]."""
    prog = pf.Program("ranks")
    w = prog.dim("w", world="W")
    b = prog.dim("b", 3)
    x = prog.input("x", point, "f32", domain=[w, b])
    local = (x * 2.0).named("local")
    prog.output("out", getattr(pf, collective)(local, over=w, **kwargs))
    return prog


def test_the_ir_names_the_worker_dim_and_the_collective():
    text = ranks_program("all_reduce", op="max").to_mlir()
    assert "pdg.dim @w < world W" in text
    assert "pdg.all_reduce max %local over @w" in text
    assert "-> !pdg.value<[b], tensor<2xf32>>" in text
    ranks_program("all_reduce").build()  # verifies


@pytest.mark.parametrize(
    ("op", "kwargs", "expected"),
    [
        ("all_reduce", {}, lambda x: (2 * x).sum(axis=0)),
        ("all_reduce", {"op": "max"}, lambda x: (2 * x).max(axis=0)),
        ("broadcast", {"root": 2}, lambda x: 2 * x[2]),
        ("all_gather", {}, lambda x: np.moveaxis(2 * x, 0, 1)),
    ],
)
def test_the_interpreter_runs_every_rank(op, kwargs, expected):
    x = np.random.default_rng(0).standard_normal((4, 3, 2)).astype(np.float32)
    got = interpret(ranks_program(op, **kwargs).build(), {"x": x}, symbols={"W": 4})
    np.testing.assert_allclose(np.asarray(got.outputs["out"]), expected(x), rtol=1e-6)


def test_a_world_of_one_is_the_identity():
    x = np.random.default_rng(1).standard_normal((1, 3, 2)).astype(np.float32)
    got = interpret(ranks_program("all_reduce").build(), {"x": x}, symbols={"W": 1})
    np.testing.assert_array_equal(got.outputs["out"], 2 * x[0])


def test_data_parallel_steps_equal_the_whole_batch_in_the_interpreter():
    """Two simulated ranks, each with half of the batch, take the steps
    one process takes over all of it."""
    inputs = training_inputs(ranks=2, per_rank=3)
    whole = interpret(training_steps(world=False).build(), inputs, symbols={"I": 3, "B": 6})
    halves = [shard(inputs, r, 2)["x"] for r in range(2)]
    dp_inputs = {"x": np.concatenate(halves), "w0": inputs["w0"]}
    dp = interpret(training_steps(world=True).build(), dp_inputs, symbols={"I": 3, "B": 3, "W": 2})
    np.testing.assert_allclose(dp.outputs["wt"], whole.outputs["wt"], rtol=1e-5, atol=1e-6)


def test_the_coordinate_along_the_worker_dim_is_the_rank():
    prog = pf.Program("which")
    w = prog.dim("w", world="W")
    prog.output("ranks", pf.all_gather(prog.coordinate(w), over=w))
    got = interpret(prog.build(), {}, symbols={"W": 3})
    np.testing.assert_array_equal(got.outputs["ranks"], [0, 1, 2])


def test_broadcast_from_a_rank_past_the_world_is_an_interpreter_error():
    x = np.zeros((2, 3, 2), np.float32)
    with pytest.raises(InterpreterError, match="broadcasts from rank 2, but dim 'w' has 2 ranks"):
        interpret(ranks_program("broadcast", root=2).build(), {"x": x}, symbols={"W": 2})


def test_collective_mistakes_are_program_errors():
    prog = pf.Program("bad")
    w = prog.dim("w", world="W")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (2,), "f32", domain=[w, b])
    y = prog.input("y", (2,), "f32", domain=[b])
    with pytest.raises(pf.ProgramError, match="dim 'b', which is not a worker dim"):
        pf.all_reduce(x, over=b)
    with pytest.raises(pf.ProgramError, match=r"value over 'w', but the value is over \[b\]"):
        pf.all_reduce(y, over=w)
    with pytest.raises(pf.ProgramError, match="all_reduce op must be one of 'sum', 'max'"):
        pf.all_reduce(x, over=w, op="mean")
    with pytest.raises(pf.ProgramError, match="broadcast root must be a rank"):
        pf.broadcast(x, over=w, root=-1)
    with pytest.raises(pf.ProgramError, match="exactly one of"):
        prog.dim("v", 4, world="V")


def test_reading_another_ranks_point_is_refused_at_the_users_line():
    prog = pf.Program("cross")
    w = prog.dim("w", world="W")
    x = prog.input("x", (), "f32", domain=[w])
    y = prog.recurrent((), "f32", domain=[w], name="y")
    y[w == 0] = x
    y[w > 0] = x[w - 1]
    prog.output("y", y)
    with pytest.raises(pf.ProgramError, match="reads worker dim 'w' at another point") as e:
        prog.build()
    assert e.value.loc.filename == __file__


def test_a_gradient_through_a_collective_without_a_rule_is_a_clear_error():
    from pdg.autodiff import grad

    prog = pf.Program("ad")
    w = prog.dim("w", world="W")
    x = prog.input("x", (4,), "f32", domain=[w])
    p = prog.input("p", (4,), "f32")
    top = pf.all_reduce((x * p).sum(), over=w, op="max").named("top")
    with pytest.raises(pf.ProgramError, match="all_reduce max over 'w' has no derivative rule"):
        grad(top, [p])
