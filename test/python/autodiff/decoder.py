"""The decoder's next-token loss as a program (for gradient tests) and the
same loss from the independent PyTorch model of the frontend tests."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pdg
import torch
from frontend.torch_reference import TorchGPT
from pdg.autodiff import grad
from pdg.nn import GPT, AttentionPattern, GPTConfig

B, T, VOCAB = 2, 6, 11


def config(pattern: str, dtype: str) -> GPTConfig:
    return GPTConfig(
        vocab=VOCAB,
        d_model=8,
        n_layers=2,
        n_heads=2,
        max_positions=T,
        pattern=AttentionPattern.parse(pattern),
        dtype=dtype,
    )


def loss_gradients_program(pattern: str, dtype: str):
    """(program, model): outputs `loss` (mean NLL) and `g.<path>` per weight."""
    prog = pdg.Program("lm_grad")
    b, t = prog.dim("b", launch="B"), prog.dim("t", T)
    tokens = prog.input("tokens", (), "i64", domain=[b, t])
    targets = prog.input("targets", (), "i64", domain=[b, t])
    model = GPT(prog, config(pattern, dtype))
    logits = model(tokens, prog.coordinate(t), t)
    nll = -pdg.take(pdg.log_softmax(logits), targets)
    loss = nll[0 : b.size, 0:T].mean()
    params = model.parameters()
    prog.output("loss", loss)
    for path, g in zip(params, grad(loss, list(params.values())), strict=True):
        prog.output("g_" + path.replace(".", "_"), g)
    return prog, model


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, VOCAB, size=(B, T)), rng.integers(0, VOCAB, size=(B, T))


def torch_gradients(weights, pattern: str, tokens, targets) -> tuple[float, dict]:
    kind, _, size = pattern.partition(":")
    ref = TorchGPT(weights, 2, 2)
    for w in ref.w.values():
        w.requires_grad_(True)
    total = 0
    for b in range(tokens.shape[0]):
        logits = ref.logits(list(tokens[b]), kind, int(size or 0))
        total = total + torch.nn.functional.cross_entropy(
            logits, torch.tensor(targets[b]), reduction="sum"
        )
    loss = total / targets.size
    loss.backward()
    return float(loss.detach()), {k: w.grad.numpy() for k, w in ref.w.items()}


def worst_error(outputs, expected: dict, floor: float = 1e-6) -> float:
    """Largest difference over all weights, relative to each weight's
    largest gradient entry, or to `floor` times the largest overall where a
    gradient is zero in exact arithmetic (the keys' bias: softmax ignores a
    shift shared by all scores)."""
    top = max(np.abs(g).max() for g in expected.values())
    worst = 0.0
    for path, g in expected.items():
        got = np.asarray(outputs["g_" + path.replace(".", "_")], np.float64)
        scale = max(np.abs(g).max(), floor * top)
        worst = max(worst, float(np.abs(got - g).max() / scale))
    return worst
