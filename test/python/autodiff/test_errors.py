"""Mistakes and unsupported gradients are ProgramErrors that say what and
where, never crashes."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pdg
import pytest
from pdg import optim
from pdg.autodiff import grad
from pdg.frontend import ProgramError
from pdg.interpreter import interpret


def program():
    prog = pdg.Program("p")
    t = prog.dim("t", 4)
    x = prog.input("x", (3,), "f32", domain=[t])
    w = prog.input("w", (3,), "f32")
    return prog, t, x, w


def test_gradient_through_argmax_is_cut_with_the_reason():
    prog, t, x, w = program()
    choice = pdg.argmax(x * w)
    loss = choice.astype("f32")
    with pytest.raises(ProgramError, match="cut at 'astype'.*'argmax'.*no derivative"):
        grad(loss, [w])


def test_gradient_through_sampling_is_cut():
    """A sampled token indexes a table and w: both get the gradient of that
    read (a count per row), and nothing flows back through the sample."""
    prog, t, x, w = program()
    token = pdg.sample(x * w, seed=1)
    table = prog.input("table", (3, 2), "f32")
    loss = pdg.take(table, token).sum() + pdg.take(w, token)
    dtable, dw = grad(loss, [table, w])
    prog.output("token", token)
    prog.output("dtable", dtable)
    prog.output("dw", dw)
    rng = np.random.default_rng(0)
    inputs = {
        "x": rng.normal(size=(4, 3)).astype(np.float32),
        "w": np.ones(3, np.float32),
        "table": np.zeros((3, 2), np.float32),
    }
    out = interpret(prog.build(), inputs, symbols={}).outputs
    counts = np.bincount(np.asarray(out["token"]), minlength=3).astype(np.float32)
    np.testing.assert_array_equal(out["dw"], counts)
    np.testing.assert_array_equal(out["dtable"], np.stack([counts, counts], axis=1))


def test_only_path_through_a_udf_is_cut():
    prog, t, x, w = program()
    reward = prog.udf(lambda a: np.float32(a.sum()), [x * w], (), "f32", name="reward")
    with pytest.raises(ProgramError, match="host callback 'reward' has no derivative"):
        grad(reward * 2.0, [w])


def test_unrelated_parameter_gets_zeros():
    prog, t, x, w = program()
    other = prog.input("other", (2,), "f32")
    dw, dother = grad((x * w).sum(), [w, other])
    prog.output("dw", dw)
    prog.output("dother", dother)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    inputs = {"x": xs, "w": np.ones(3, np.float32), "other": np.ones(2, np.float32)}
    out = interpret(prog.build(), inputs, symbols={}).outputs
    np.testing.assert_array_equal(out["dother"], np.zeros(2, np.float32))
    np.testing.assert_array_equal(out["dw"], xs.sum(axis=0))


def test_loss_must_be_a_float_scalar():
    prog, t, x, w = program()
    with pytest.raises(ProgramError, match="scalar loss per point"):
        grad(x * w, [w])
    with pytest.raises(ProgramError, match="float loss"):
        grad(pdg.argmax(x), [w])


def test_parameters_must_be_tensors_not_views():
    prog, t, x, w = program()
    with pytest.raises(ProgramError, match="not views"):
        grad((x * w).sum(), [x[0]])
    with pytest.raises(ProgramError, match="list of parameters"):
        grad((x * w).sum(), w)


def test_access_that_cannot_be_inverted():
    prog = pdg.Program("p")
    t = prog.dim("t", 4)
    s = prog.dim("s", 8)
    x = prog.input("x", (), "f32", domain=[s])
    y = prog.recurrent((), "f32", domain=[t])
    y[...] = x[2 * t]
    with pytest.raises(ProgramError, match="not a consumer dim plus an offset"):
        grad(y * y, [x])


def test_minimize_needs_parameters_over_the_iteration_dim():
    prog, t, x, w = program()
    with pytest.raises(ProgramError, match="iterate_parameters"):
        optim.minimize((x * w).sum(), {"w": w}, optim.SGD(lr=0.1))


def test_optimizer_arguments_are_checked():
    with pytest.raises(ProgramError, match="beta1"):
        optim.Adam(lr=1e-3, betas=(1.5, 0.9))
    with pytest.raises(ProgramError, match="learning rate"):
        optim.SGD(lr=-1.0)
    with pytest.raises(ProgramError, match="warmup"):
        optim.cosine(1e-3, total=10, warmup=10)


def test_checkpoint_rejects_other_files(tmp_path):
    bad = tmp_path / "x.npz"
    np.savez(bad, a=np.zeros(2))
    with pytest.raises(ValueError, match="not a pdg checkpoint"):
        optim.load_checkpoint(bad)
    (tmp_path / "junk.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="cannot read checkpoint"):
        optim.load_checkpoint(tmp_path / "junk.npz")


def test_training_setup_mistakes():
    prog = pdg.Program("p")
    i = prog.dim("i", launch="I")
    t = prog.dim("t", dynamic="T", max=4)
    with pytest.raises(ProgramError, match="not a dynamic one"):
        prog.iterate_parameters(t)
    prog.iterate_parameters(i)
    w = prog.parameter("w", (2,), "f32")
    x = prog.input("x", (2,), "f32", domain=[i])
    loss = (w * x).sum()
    optim.minimize(loss, {"w": w}, optim.SGD(lr=0.1))
    with pytest.raises(ProgramError, match="already updated by another optimizer"):
        optim.minimize(loss, {"w": w}, optim.SGD(lr=0.1))
    v = prog.parameter("v", (), "f32")
    with pytest.raises(ProgramError, match="needs an optimizer"):
        optim.minimize((v * x).sum(), {"v": v}, "sgd")
    with pytest.raises(ProgramError, match=r"loss over exactly \[i\]"):
        optim.minimize(prog.input("z", (), "f32"), {"v": v}, optim.SGD(lr=0.1))


def test_stop_gradient_passes_its_value_and_no_gradient():
    """exp(y - stop_gradient(y)) is 1 with the gradient of y (a policy
    ratio at the sampling policy); through stop_gradient alone the loss
    reaches w only as a constant: a cut, named."""
    prog, t, x, w = program()
    y = x * w
    ratio = pdg.exp(y - pdg.stop_gradient(y))
    loss = (ratio * 2.0).sum()
    (dw,) = grad(loss, [w])
    prog.output("loss", loss)
    prog.output("dw", dw)
    rng = np.random.default_rng(1)
    inputs = {"x": rng.normal(size=(4, 3)).astype(np.float32), "w": np.ones(3, np.float32)}
    out = interpret(prog.build(), inputs, symbols={}).outputs
    np.testing.assert_array_equal(out["loss"], np.full(4, 6.0, np.float32))
    np.testing.assert_allclose(out["dw"], 2.0 * inputs["x"].sum(axis=0), rtol=1e-6)
    with pytest.raises(ProgramError, match="stop_gradient\\(\\) reads its value as a constant"):
        grad(pdg.stop_gradient(y).sum(), [w])
