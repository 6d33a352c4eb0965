"""Loop nests inside loop nests, compiled and run against the interpreter:
an iteration loop holding a loop over a static dim, an iteration loop
holding a generation loop over a dynamic dim (sequences alive again at each
iteration, their stores reused) and a second pass over it once the lengths
are known, a recurrence stepping backward over a dynamic dim (a replay of
the steps the generation ran), and a dynamic dim ending per two dims."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.interpreter import interpret
from pdg.lowering.artifact import CompileError, compile_module

from lowering.ragged import assert_same


def compiled(tmp_path, prog: pf.Program):
    path = tmp_path / f"{prog.name}.pdgx"
    compile_module(prog.build(), path, gpu=False)
    return pdg.runtime.load(path)


def iterations_over_static_steps() -> pf.Program:
    """w[i] = w[i - 1] + 0.1 h[i - 1, 4], h a recurrence over t < 5 at each i."""
    prog = pf.Program("static_inner")
    i = prog.dim("i", launch="I")
    t = prog.dim("t", 5)
    w0 = prog.input("w0", (4,), "f32")
    a = prog.input("a", (4,), "f32", domain=[t])
    w = prog.recurrent((4,), "f32", domain=[i], name="w")
    h = prog.recurrent((4,), "f32", domain=[i, t], name="h")
    h[t == 0] = pf.tanh(w + a)
    h[t > 0] = pf.tanh(h[t - 1] + w + a)
    w[i == 0] = w0
    w[i > 0] = w[i - 1] + h[i - 1, 4] * 0.1
    prog.output("w", w)
    prog.output("h", h)
    return prog


def test_iteration_loop_holding_a_static_loop(tmp_path):
    prog = iterations_over_static_steps()
    rng = np.random.default_rng(0)
    inputs = {
        "w0": rng.standard_normal(4).astype(np.float32),
        "a": rng.standard_normal((5, 4)).astype(np.float32),
    }
    want = interpret(prog.build(), inputs, symbols={"I": 3}).outputs
    got = compiled(tmp_path, prog).run(inputs, {"I": 3}).outputs
    # float32 tanh: LLVM's and NumPy's differ in the last bits.
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["h"], want["h"], rtol=1e-5, atol=1e-6)


def generation_in_iterations() -> pf.Program:
    """Each iteration i generates sequences x[i, b, t] that end on their
    own, sums each over its own steps (r), makes a second pass over them
    scaled by their last step (y, q), and updates w from both."""
    prog = pf.Program("generate")
    i = prog.dim("i", launch="I")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", dynamic="T", max=8)
    w0 = prog.input("w0", (), "f32")
    a = prog.input("a", (), "f32", domain=[b])
    limit = prog.input("limit", (), "f32", domain=[b])
    w = prog.recurrent((), "f32", domain=[i], name="w")
    x = prog.recurrent((), "f32", domain=[i, b, t], name="x")
    x[t == 0] = a * w
    x[t > 0] = x[t - 1] * 0.9 + w
    t.until((x > limit).named("done"))
    r = x[0 : t.size].sum().named("r")
    y = (x * x[t.size - 1]).named("y")
    q = y[0 : t.size].sum().named("q")
    s = (r + q)[0 : b.size].sum().named("s")
    w[i == 0] = w0
    w[i > 0] = w[i - 1] + s[i - 1] * 0.01
    prog.output("w", w)
    prog.output("r", r)
    prog.output("q", q)
    return prog


def test_generation_loop_inside_an_iteration_loop(tmp_path):
    prog = generation_in_iterations()
    program = compiled(tmp_path, prog)
    # Sequences of 1 to 8 steps, a different mix at each iteration (w grows).
    inputs = {
        "w0": np.float32(0.5),
        "a": np.array([1.0, 2.0, 3.0], np.float32),
        "limit": np.array([2.0, 3.0, 100.0], np.float32),
    }
    symbols = {"I": 4, "B": 3}
    want = interpret(prog.build(), inputs, symbols=symbols).outputs
    got = program.run(inputs, symbols)
    for name in ("w", "r", "q"):
        np.testing.assert_allclose(got.outputs[name], want[name], rtol=1e-5)
    # No lengths come back: they differ per iteration.
    assert got.bounds == {}


def test_generation_stores_hold_one_iteration_of_the_steps_run(tmp_path):
    """x's and y's stores are [1, B, steps]: one iteration, grown to the
    longest sequence, not I x B x max. From 1 to 50 iterations the peak
    grows by the outputs only: w [I] and r, q [I, B] of 4-byte floats, each
    allocation a multiple of 64 bytes."""
    prog = generation_in_iterations()
    program = compiled(tmp_path, prog)
    inputs = {
        "w0": np.float32(0.5),
        "a": np.array([1.0, 2.0], np.float32),
        "limit": np.array([0.1, 0.2], np.float32),  # one step each, at every iteration
    }
    peaks = {n: program.run(inputs, {"I": n, "B": 2}).peak_bytes for n in (1, 50)}

    def outputs(n: int) -> int:
        return sum(-(-size // 64) * 64 for size in (4 * n, 4 * n * 2, 4 * n * 2))

    assert peaks[50] - peaks[1] == outputs(50) - outputs(1)


def backward_over_generation() -> pf.Program:
    """x runs forward until it passes 10; d runs backward over the steps
    each sequence ran (the shape of a gradient through a generation)."""
    prog = pf.Program("backward")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", dynamic="T", max=8)
    a = prog.input("a", (), "f32", domain=[b])
    x = prog.recurrent((), "f32", domain=[b, t], name="x")
    x[t == 0] = a
    x[t > 0] = x[t - 1] * 1.5
    t.until((x > 10.0).named("done"))
    d = prog.recurrent((), "f32", domain=[b, t], name="d")
    d[t == t.size - 1] = x
    d[t < t.size - 1] = d[t + 1] * 0.5 + x
    prog.output("d", d)
    return prog


def test_backward_recurrence_over_a_dynamic_dim(tmp_path):
    prog = backward_over_generation()
    inputs = {"a": np.array([1.0, 3.0, 20.0, -1.0], np.float32)}
    symbols = {"B": 4}
    want = interpret(prog.build(), inputs, symbols=symbols)
    got = compiled(tmp_path, prog).run(inputs, symbols)
    np.testing.assert_array_equal(got.bounds["T"], np.asarray(want.bounds["T"]))
    assert got.bounds["T"].tolist() == [7, 4, 1, 8]  # the last at the dim's max
    assert_same(got.outputs["d"], want.outputs["d"])


def test_sequences_along_two_dims(tmp_path):
    """A dim ending per (p, g): lengths come back shaped [P, G]."""
    prog = pf.Program("groups")
    p = prog.dim("p", launch="P")
    g = prog.dim("g", 3)
    t = prog.dim("t", dynamic="T", max=8)
    a = prog.input("a", (), "f32", domain=[p, g])
    x = prog.recurrent((), "f32", domain=[p, g, t], name="x")
    x[t == 0] = a
    x[t > 0] = x[t - 1] + a
    t.until((x > 5.0).named("done"))
    prog.output("total", x[0 : t.size].sum())
    inputs = {"a": np.array([[1.0, 2.0, 6.0], [0.5, 3.0, 0.1]], np.float32)}
    want = interpret(prog.build(), inputs, symbols={"P": 2})
    got = compiled(tmp_path, prog).run(inputs, {"P": 2})
    assert got.bounds["T"].tolist() == [[6, 3, 1], [8, 2, 8]]
    np.testing.assert_array_equal(got.bounds["T"], np.asarray(want.bounds["T"]).reshape(2, 3))
    np.testing.assert_allclose(got.outputs["total"], want.outputs["total"], rtol=1e-6)


def test_output_over_a_nested_dynamic_dim_is_refused(tmp_path):
    prog = generation_in_iterations()
    x = next(v for v in prog.values if v.name == "x")
    prog.output("x", x)
    with pytest.raises(CompileError, match="output 'x' is over a dynamic dim looped over inside"):
        compile_module(prog.build(), tmp_path / "bad.pdgx", gpu=False)
