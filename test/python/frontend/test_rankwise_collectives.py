"""pf.reduce_scatter and pf.shift: the collectives that give each rank a
point of its own (their result keeps the worker dim), the IR they build,
the mistakes they refuse, and what the interpreter computes when it runs
every rank's points in one process."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pytest
from pdg.interpreter import interpret
from pdg.interpreter.errors import InterpreterError

from .test_collectives import ranks_program


def rankwise_program(collective: str, **kwargs) -> pf.Program:
    """Points of 4 blocks of 2 (reduce_scatter's blocks, one per rank at W = 4)."""
    return ranks_program(collective, point=(4, 2), **kwargs)


def test_the_ir_keeps_the_worker_dim_in_the_result():
    text = rankwise_program("reduce_scatter", op="max").to_mlir()
    assert "pdg.reduce_scatter max %local over @w" in text
    assert "-> !pdg.value<[w, b], tensor<2xf32>>" in text
    text = rankwise_program("shift", by=-2).to_mlir()
    assert "pdg.shift %local by -2 over @w" in text
    assert "-> !pdg.value<[w, b], tensor<4x2xf32>>" in text
    rankwise_program("shift").build()  # verifies


def reduce_scatter(combine):
    """NumPy's reduce-scatter of 2 * x, x: (rank, b, block, 2): rank r gets
    block r of the ranks combined."""

    def expected(x):
        total = combine(2 * x, axis=0)  # (b, block, 2)
        return np.stack([total[:, r] for r in range(len(x))])

    return expected


@pytest.mark.parametrize(
    ("op", "kwargs", "expected"),
    [
        ("reduce_scatter", {}, reduce_scatter(np.sum)),
        ("reduce_scatter", {"op": "max"}, reduce_scatter(np.max)),
        ("shift", {}, lambda x: np.roll(2 * x, 1, axis=0)),  # rank r gets r - 1's
        ("shift", {"by": -1}, lambda x: np.roll(2 * x, -1, axis=0)),
        ("shift", {"by": 6}, lambda x: np.roll(2 * x, 2, axis=0)),  # mod W
    ],
)
def test_the_interpreter_gives_each_rank_its_own_point(op, kwargs, expected):
    x = np.random.default_rng(0).standard_normal((4, 3, 4, 2)).astype(np.float32)
    got = interpret(rankwise_program(op, **kwargs).build(), {"x": x}, symbols={"W": 4})
    np.testing.assert_allclose(np.asarray(got.outputs["out"]), expected(x), rtol=1e-6)


def test_reduce_scatter_then_all_gather_is_the_all_reduce():
    prog = pf.Program("rs_ag")
    w = prog.dim("w", world="W")
    x = prog.input("x", (3, 5), "f64", domain=[w])
    mine = pf.reduce_scatter(x * 1.0, over=w)
    prog.output("via_blocks", pf.all_gather(mine, over=w))
    prog.output("all_reduce", pf.all_reduce(x * 1.0, over=w))
    x = np.random.default_rng(2).standard_normal((3, 3, 5))
    got = interpret(prog.build(), {"x": x}, symbols={"W": 3}).outputs
    np.testing.assert_allclose(got["via_blocks"], got["all_reduce"], rtol=1e-12)
    np.testing.assert_allclose(got["all_reduce"], x.sum(axis=0), rtol=1e-12)


def test_reduce_scatter_blocks_must_match_the_ranks():
    x = np.zeros((2, 3, 4, 2), np.float32)  # 4 blocks, 2 ranks
    with pytest.raises(InterpreterError, match="the points have 4 blocks and dim 'w' 2 ranks") as e:
        interpret(rankwise_program("reduce_scatter").build(), {"x": x}, symbols={"W": 2})
    assert "leading dim of size W" in str(e.value)


def test_rankwise_mistakes_are_program_errors():
    prog = pf.Program("bad")
    w = prog.dim("w", world="W", max=2)
    b = prog.dim("b", launch="B")
    x = prog.input("x", (2, 2), "f32", domain=[w, b])
    y = prog.input("y", (2,), "f32", domain=[b])
    s = prog.input("s", (), "f32", domain=[w])
    with pytest.raises(pf.ProgramError, match="dim 'b', which is not a worker dim"):
        pf.reduce_scatter(x, over=b)
    with pytest.raises(pf.ProgramError, match="dim 'b', which is not a worker dim"):
        pf.shift(x, over=b)
    with pytest.raises(pf.ProgramError, match=r"value over 'w', but the value is over \[b\]"):
        pf.shift(y, over=w)
    with pytest.raises(pf.ProgramError, match="reduce_scatter op must be one of 'sum', 'max'"):
        pf.reduce_scatter(x, over=w, op="mean")
    with pytest.raises(pf.ProgramError, match="leading dim of W blocks .* got a scalar point"):
        pf.reduce_scatter(s, over=w)
    with pytest.raises(pf.ProgramError, match="the points have 3 blocks and dim 'w' allows"):
        pf.reduce_scatter(prog.input("z", (3,), "f32", domain=[w]), over=w)
    with pytest.raises(pf.ProgramError, match="shift by must be an int"):
        pf.shift(x, over=w, by=1.5)


def test_the_gradient_through_a_shift_shifts_back():
    """loss = sum_r c[r] * x[r - 1]: x[r]'s gradient is c[r + 1]."""
    from pdg.autodiff import grad

    prog = pf.Program("ad")
    w = prog.dim("w", world="W")
    x = prog.input("x", (2,), "f64", domain=[w])
    c = prog.input("c", (2,), "f64", domain=[w])
    local = (pf.shift(x * 1.0, over=w, by=1) * c).sum()
    (dx,) = grad(pf.all_reduce(local, over=w).named("loss"), [x])
    prog.output("dx", dx)
    rng = np.random.default_rng(3)
    inputs = {"x": rng.standard_normal((3, 2)), "c": rng.standard_normal((3, 2))}
    got = interpret(prog.build(), inputs, symbols={"W": 3}).outputs
    np.testing.assert_allclose(got["dx"], np.roll(inputs["c"], -1, axis=0), rtol=1e-12)


def test_a_gradient_through_a_reduce_scatter_is_a_clear_error():
    from pdg.autodiff import grad

    prog = pf.Program("ad")
    w = prog.dim("w", world="W")
    x = prog.input("x", (2, 3), "f32", domain=[w])
    p = prog.input("p", (2, 3), "f32")
    mine = pf.reduce_scatter(x * p, over=w).sum()
    with pytest.raises(pf.ProgramError, match="reduce_scatter sum over 'w' has no derivative"):
        grad(pf.all_reduce(mine, over=w).named("loss"), [p])
