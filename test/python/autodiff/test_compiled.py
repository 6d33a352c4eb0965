"""Gradients and training compiled to native code (float32) through the
runtime: the decoder's gradients against PyTorch autograd in float64, and a
whole training run against the same loop in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pdg.lowering.artifact import compile_module  # noqa: E402
from pdg.runtime import load  # noqa: E402

from .decoder import B, data, loss_gradients_program, torch_gradients, worst_error  # noqa: E402


@pytest.mark.parametrize("pattern", ["full", "window:3", "block:4"])
def test_decoder_gradients_compiled_float32(tmp_path, pattern):
    prog, model = loss_gradients_program(pattern, "f32")
    compile_module(prog.build(), tmp_path / "grad.pdgx", gpu=False)
    weights = model.init_weights(seed=3, scale=0.5)
    tokens, targets = data()
    inputs = {**model.inputs_from(weights), "tokens": tokens, "targets": targets}
    result = load(tmp_path / "grad.pdgx").run(inputs, symbols={"B": B})
    loss, expected = torch_gradients(weights, pattern, tokens, targets)
    assert abs(float(result.outputs["loss"]) - loss) < 1e-5 * abs(loss)
    assert worst_error(result.outputs, expected, floor=1e-3) < 1e-4


def test_decoder_gradients_compiled_vectorized(tmp_path):
    """The same gradients with the batch folded into the point type
    (pdg-vectorize over b): the padded attention-gradient factors and their
    diagonals are batched too."""
    prog, model = loss_gradients_program("full", "f32")
    compile_module(prog.build(), tmp_path / "grad.pdgx", gpu=False, vectorize="b")
    weights = model.init_weights(seed=3, scale=0.5)
    tokens, targets = data()
    inputs = {**model.inputs_from(weights), "tokens": tokens, "targets": targets}
    result = load(tmp_path / "grad.pdgx").run(inputs, symbols={"B": B})
    loss, expected = torch_gradients(weights, "full", tokens, targets)
    assert abs(float(result.outputs["loss"]) - loss) < 1e-5 * abs(loss)
    assert worst_error(result.outputs, expected, floor=1e-3) < 1e-4


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    """The copy-task training program, compiled once for these tests."""
    from .training import train_program

    tp = train_program("f32")
    path = tmp_path_factory.mktemp("train") / "train.pdgx"
    compile_module(tp.program.build(), path, gpu=False)
    return tp, load(path)


def test_training_matches_pytorch(trainer):
    """40 Adam iterations compiled as one program: the loss falls as PyTorch's does."""
    from .training import copy_task, torch_losses

    tp, program = trainer
    tokens, targets = copy_task(40)
    weights = tp.model.init_weights(seed=1, scale=0.3)
    result = program.run(tp.inputs(weights, tokens, targets), symbols={"I": 40})
    ours = np.asarray(result.outputs["loss"], np.float64)
    theirs = np.asarray(torch_losses(weights, tokens, targets))
    assert ours[-5:].mean() < 0.85 * ours[:5].mean()  # it learns
    assert abs(ours[-5:].mean() - theirs[-5:].mean()) < 0.01 * theirs[-5:].mean()
    assert np.max(np.abs(ours - theirs) / theirs) < 1e-3


def test_resume_from_checkpoint_is_bit_identical(trainer, tmp_path):
    """12 iterations at once, or 5, a checkpoint, and 7 more from it."""
    from .training import copy_task

    tp, program = trainer
    tokens, targets = copy_task(12, seed=4)
    weights = tp.model.init_weights(seed=2, scale=0.3)
    whole = program.run(tp.inputs(weights, tokens, targets), symbols={"I": 12})

    first = program.run(tp.inputs(weights, tokens[:5], targets[:5]), symbols={"I": 5})
    tp.training.save(tmp_path / "ckpt.npz", first.outputs, next_step=5)
    w, state, step = tp.training.load(tmp_path / "ckpt.npz")
    rest = program.run(
        tp.inputs(w, tokens[step:], targets[step:], state=state, start_step=step),
        symbols={"I": 7},
    )
    assert np.array_equal(
        np.concatenate([first.outputs["loss"], rest.outputs["loss"]]), whole.outputs["loss"]
    )
    for name, value in whole.outputs.items():
        if name.startswith("final__"):
            assert np.array_equal(rest.outputs[name], value), name


def test_recurrence_gradients_compiled_float32(tmp_path):
    """Backpropagation through time compiled: the forward loop over t, then
    a loop from the last step back for the gradient's recurrence."""
    import pdg.frontend as pdg
    from pdg.autodiff import grad

    steps, dim, batch = 9, 4, 3
    prog = pdg.Program("rnn")
    b, t = prog.dim("b", launch="B"), prog.dim("t", steps)
    x = prog.input("x", (dim,), "f32", domain=[b, t])
    w = prog.input("w", (dim, dim), "f32")
    h = prog.recurrent((dim,), "f32", domain=[b, t], name="h")
    h[t == 0] = pdg.tanh(x)
    h[t > 0] = pdg.tanh(w @ h[t - 1] + x)
    loss = (h * h).sum()
    dw, dx = grad(loss, [w, x])
    prog.output("dw", dw)
    prog.output("dx", dx)
    compile_module(prog.build(), tmp_path / "rnn.pdgx", gpu=False)
    rng = np.random.default_rng(9)
    inputs = {
        "x": rng.normal(size=(batch, steps, dim)).astype(np.float32),
        "w": (rng.normal(size=(dim, dim)) * 0.6).astype(np.float32),
    }
    result = load(tmp_path / "rnn.pdgx").run(inputs, symbols={"B": batch})

    tx = torch.tensor(inputs["x"], dtype=torch.float64, requires_grad=True)
    tw = torch.tensor(inputs["w"], dtype=torch.float64, requires_grad=True)
    total = 0
    for bb in range(batch):
        state = torch.tanh(tx[bb, 0])
        total = total + (state * state).sum()
        for k in range(1, steps):
            state = torch.tanh(tw @ state + tx[bb, k])
            total = total + (state * state).sum()
    total.backward()
    for name, expected in (("dw", tw.grad), ("dx", tx.grad)):
        got = np.asarray(result.outputs[name], np.float64)
        err = np.abs(got - expected.numpy()).max() / np.abs(expected.numpy()).max()
        assert err < 1e-4, (name, err)


def test_global_norm_over_many_weights_compiled(tmp_path):
    """Clipping by the norm of 48 gradients together: pdg-fuse cuts the
    chain that adds up their sums of squares into nodes of at most 40
    reads (test/Graph/pdg-fuse-max-reads.mlir); the compiled norm and the
    clipped SGD steps still match torch's clip_grad_norm_ in float64 (to
    float32's 1e-5)."""
    from pdg import optim
    from pdg import frontend as pf

    count, size, iters, lr, clip = 48, 8, 3, 0.1, 0.5
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=(count, size)).astype(np.float32)
    xs = rng.normal(size=(iters, size)).astype(np.float32)
    prog = pf.Program("norm")
    i = prog.dim("i", launch="I")
    prog.iterate_parameters(i)
    ws = {f"w{k}": prog.parameter(f"w{k}", (size,), "f32") for k in range(count)}
    x = prog.input("x", (size,), "f32", domain=[i])
    loss = sum(((w * w * x).sum() * (k + 1) / count for k, w in enumerate(ws.values())), 0.0)
    training = optim.minimize(loss, ws, optim.SGD(lr), clip_norm=clip)
    prog.output("norm", training.grad_norm)
    training.add_outputs()
    compile_module(prog.build(), tmp_path / "norm.pdgx", gpu=False)
    inputs = training.initial_inputs({f"w{k}": w0[k] for k in range(count)})
    result = load(tmp_path / "norm.pdgx").run({**inputs, "x": xs}, symbols={"I": iters})

    tw = [torch.tensor(w0[k], dtype=torch.float64, requires_grad=True) for k in range(count)]
    opt = torch.optim.SGD(tw, lr)
    norms = []
    for t in range(iters):
        opt.zero_grad()
        x_t = torch.tensor(xs[t], dtype=torch.float64)
        sum((w * w * x_t).sum() * (k + 1) / count for k, w in enumerate(tw)).backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(tw, clip)))
        opt.step()
    np.testing.assert_allclose(result.outputs["norm"], norms, rtol=1e-5)
    weights, _ = training.final_state(result.outputs)
    for k in range(count):
        np.testing.assert_allclose(weights[f"w{k}"], tw[k].detach().numpy(), rtol=1e-5, atol=1e-6)
