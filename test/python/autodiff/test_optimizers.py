"""Optimizers as recurrences over the iteration dim, against torch.optim
(float64, interpreter): a least-squares problem with new data each
iteration, its loss and final weights after every iteration."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pdg.frontend as pdg  # noqa: E402
from pdg import optim  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402

ITERS, D = 8, 3
rng = np.random.default_rng(11)
A = rng.normal(size=(ITERS, 4, D))
Y = rng.normal(size=(ITERS, 4))
W0 = rng.normal(size=(D,))
V0 = rng.normal(size=(2,))


def cosine_lr(step: int, lr: float, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) * lr / warmup
    progress = min(max((step - warmup) / (total - warmup), 0.0), 1.0)
    return 0.5 * (math.cos(math.pi * progress) + 1.0) * lr


CASES = {
    "sgd": (lambda lr: optim.SGD(lr), lambda p, lr: torch.optim.SGD(p, lr), None),
    "momentum": (
        lambda lr: optim.SGD(lr, momentum=0.9, weight_decay=0.1),
        lambda p, lr: torch.optim.SGD(p, lr, momentum=0.9, weight_decay=0.1),
        None,
    ),
    "nesterov": (
        lambda lr: optim.SGD(lr, momentum=0.8, nesterov=True),
        lambda p, lr: torch.optim.SGD(p, lr, momentum=0.8, nesterov=True),
        None,
    ),
    "adam": (
        lambda lr: optim.Adam(lr, betas=(0.8, 0.95), weight_decay=0.05),
        lambda p, lr: torch.optim.Adam(p, lr, betas=(0.8, 0.95), weight_decay=0.05),
        None,
    ),
    "adamw-cosine-clip": (
        lambda lr: optim.AdamW(optim.cosine(lr, total=ITERS, warmup=2)),
        lambda p, lr: torch.optim.AdamW(p, lr),
        0.5,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_torch(name):
    ours, theirs, clip = CASES[name]
    lr = 0.05
    prog = pdg.Program("fit")
    i = prog.dim("i", launch="I")
    prog.iterate_parameters(i)
    w = prog.parameter("w", (D,), "f64")
    v = prog.parameter("v", (2,), "f64")
    a = prog.input("a", (4, D), "f64", domain=[i])
    y = prog.input("y", (4,), "f64", domain=[i])
    r = a @ w - y
    loss = (r * r).sum() + (v * v * v).sum() * pdg.tanh(w.sum())
    training = optim.minimize(loss, {"w": w, "v": v}, ours(lr), clip_norm=clip)
    prog.output("loss", loss)
    training.add_outputs()
    inputs = training.initial_inputs({"w": W0, "v": V0})
    inputs.update(a=A, y=Y)
    result = interpret(prog.build(), inputs, symbols={"I": ITERS})

    tw = torch.tensor(W0, requires_grad=True)
    tv = torch.tensor(V0, requires_grad=True)
    opt = theirs([tw, tv], lr)
    losses = []
    for k in range(ITERS):
        if name.endswith("cosine-clip"):
            opt.param_groups[0]["lr"] = cosine_lr(k, lr, ITERS, 2)
        opt.zero_grad()
        rr = torch.tensor(A[k]) @ tw - torch.tensor(Y[k])
        tl = (rr * rr).sum() + (tv**3).sum() * torch.tanh(tw.sum())
        tl.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_([tw, tv], clip)
        opt.step()
        losses.append(float(tl.detach()))
    np.testing.assert_allclose(result.outputs["loss"], losses, rtol=1e-10)
    weights, _ = training.final_state(result.outputs)
    np.testing.assert_allclose(weights["w"], tw.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(weights["v"], tv.detach().numpy(), rtol=1e-10)
