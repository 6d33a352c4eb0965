"""pdg.nn layers, run by the interpreter, against torch (float64):
LayerNorm, RMSNorm, Linear, MLP (tanh GELU), rotary embeddings at several
positions, and log_softmax / softmax over a slice."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import pdg.frontend as pdg  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.nn import MLP, LayerNorm, RMSNorm, rotary  # noqa: E402

RTOL = 1e-10


def test_01_norms_linear_mlp_match_torch():
    prog = pdg.Program("layers")
    b = prog.dim("b", 3)
    x = prog.input("x", (8,), "f64", domain=[b])
    ln = LayerNorm(prog, "ln", 8, dtype="f64")
    rms = RMSNorm(prog, "rms", 8, dtype="f64")
    mlp = MLP(prog, "mlp", 8, 16, dtype="f64")
    prog.output("ln", ln(x))
    prog.output("rms", rms(x))
    prog.output("mlp", mlp(x))
    rng = np.random.default_rng(0)
    weights = {
        k: rng.standard_normal(v.shape)
        for k, v in {**ln.parameters(), **rms.parameters(), **mlp.parameters()}.items()
    }
    xs = rng.standard_normal((3, 8))
    inputs = {
        **ln.inputs_from(weights),
        **rms.inputs_from(weights),
        **mlp.inputs_from(weights),
        "x": xs,
    }
    out = interpret(prog.build(), inputs).outputs
    tx = torch.tensor(xs)
    w = {k: torch.tensor(v) for k, v in weights.items()}
    ref_ln = F.layer_norm(tx, (8,), w["ln.g"], w["ln.b"], eps=1e-5)
    ref_rms = tx * torch.rsqrt((tx * tx).mean(-1, keepdim=True) + 1e-6) * w["rms.g"]
    hidden = F.gelu(tx @ w["mlp.fc.w"] + w["mlp.fc.b"], approximate="tanh")
    ref_mlp = hidden @ w["mlp.proj.w"] + w["mlp.proj.b"]
    np.testing.assert_allclose(out["ln"], ref_ln.numpy(), rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(out["rms"], ref_rms.numpy(), rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(out["mlp"], ref_mlp.numpy(), rtol=RTOL, atol=RTOL)


def test_02_rotary_matches_torch_rotate_half():
    prog = pdg.Program("rope")
    t = prog.dim("t", 5)
    q = prog.input("q", (2, 6), "f64", domain=[t])
    prog.output("r", rotary(q, prog.coordinate(t)))
    qs = np.random.default_rng(1).standard_normal((5, 2, 6))
    out = interpret(prog.build(), {"q": qs}).outputs["r"]
    tq = torch.tensor(qs)
    inv = 10000.0 ** (-torch.arange(0, 6, 2, dtype=torch.float64) / 6)
    angles = torch.arange(5, dtype=torch.float64)[:, None] * inv[None, :]
    cos = torch.cat([angles.cos(), angles.cos()], -1)[:, None, :]
    sin = torch.cat([angles.sin(), angles.sin()], -1)[:, None, :]
    rotated = torch.cat([-tq[..., 3:], tq[..., :3]], -1)
    np.testing.assert_allclose(out, (tq * cos + rotated * sin).numpy(), rtol=RTOL, atol=RTOL)


def test_03_softmax_and_log_softmax_over_a_window():
    prog = pdg.Program("sm")
    t = prog.dim("t", 6)
    s = prog.input("s", (), "f64", domain=[t])
    window = s[pdg.max(0, t - 2) : t + 1]
    prog.output("p", pdg.softmax(window))
    prog.output("lp", pdg.log_softmax(window))
    xs = np.random.default_rng(2).standard_normal(6)
    out = interpret(prog.build(), {"s": xs}).outputs
    for step in range(6):
        seg = torch.tensor(xs[max(0, step - 2) : step + 1])
        np.testing.assert_allclose(out["p"][step], seg.softmax(0).numpy(), rtol=RTOL)
        np.testing.assert_allclose(out["lp"][step], seg.log_softmax(0).numpy(), rtol=RTOL)
