"""Every operator family's vector-Jacobian rule against torch.autograd
(float64, interpreter): elementwise math with broadcasting and constants,
reductions, contractions, softmax, gathers and shape operators."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pdg.frontend as pdg  # noqa: E402
from pdg.autodiff import grad  # noqa: E402

from .gradcheck import check_grads  # noqa: E402

rng = np.random.default_rng(7)
X = rng.normal(size=(3, 4))
Y = rng.normal(size=(4,))
POS = rng.uniform(0.5, 2.0, size=(3, 4))

F = torch.nn.functional

UNARY = {
    "exp": (pdg.exp, torch.exp, X),
    "log": (pdg.log, torch.log, POS),
    "log1p": (pdg.log1p, torch.log1p, POS),
    "tanh": (pdg.tanh, torch.tanh, X),
    "sqrt": (pdg.sqrt, torch.sqrt, POS),
    "rsqrt": (pdg.rsqrt, torch.rsqrt, POS),
    "sin": (pdg.sin, torch.sin, X),
    "cos": (pdg.cos, torch.cos, X),
    "erf": (pdg.erf, torch.erf, X),
    "abs": (pdg.abs, torch.abs, X),
    "sigmoid": (pdg.sigmoid, torch.sigmoid, X),
    "relu": (pdg.relu, torch.relu, X),
    "gelu": (pdg.gelu, lambda x: F.gelu(x, approximate="tanh"), X),
    "silu": (pdg.silu, F.silu, X),
    "neg": (lambda x: -x, lambda x: -x, X),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    ours, theirs, data = UNARY[name]
    check_grads(
        lambda v: (ours(v["x"]) * v["w"]).sum(),
        lambda v: (theirs(v["x"]) * v["w"]).sum(),
        {"x": data, "w": rng.normal(size=data.shape)},
    )


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(name):
    """(3, 4) with (4,) and with (3, 1): gradients summed over broadcast axes."""
    fn = BINARY[name]
    arrays = {"a": X, "b": POS[0], "c": POS[:, :1]}
    check_grads(
        lambda v: (fn(fn(v["a"], v["b"]), v["c"]) ** 2.0).sum(),
        lambda v: (fn(fn(v["a"], v["b"]), v["c"]) ** 2.0).sum(),
        arrays,
    )


def test_constants_on_either_side():
    check_grads(
        lambda v: ((2.0 - v["x"]) * 3.0 / (v["x"] * v["x"] + 1.0) + 1.0 / (v["x"] + 4.0)).sum(),
        lambda v: ((2.0 - v["x"]) * 3.0 / (v["x"] * v["x"] + 1.0) + 1.0 / (v["x"] + 4.0)).sum(),
        {"x": X},
    )


def test_pow_maximum_minimum_where():
    a, b = POS, rng.uniform(0.5, 2.0, size=(3, 4))
    b[0, 0] = a[0, 0]  # a tie: the gradient is split as in PyTorch

    def ours(v):
        p = v["a"] ** v["b"]
        m = pdg.maximum(v["a"], v["b"]) * pdg.minimum(v["a"], v["b"])
        w = pdg.where(v["a"] > v["b"], v["a"] * 2.0, v["b"])
        return (p + m + w).sum()

    def theirs(v):
        p = torch.pow(v["a"], v["b"])
        m = torch.maximum(v["a"], v["b"]) * torch.minimum(v["a"], v["b"])
        w = torch.where(v["a"] > v["b"], v["a"] * 2.0, v["b"])
        return (p + m + w).sum()

    check_grads(ours, theirs, {"a": a, "b": b})


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(kind, keepdims):
    w = rng.normal(size=(3, 1) if keepdims else (3,))

    def ours(v):
        r = getattr(v["x"], kind)(axis=1, keepdims=keepdims)
        return (r * v["w"]).sum() + getattr(v["x"], kind)()

    def theirs(v):
        fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[kind]
        return (fn(v["x"], dim=1, keepdim=keepdims) * v["w"]).sum() + fn(v["x"])

    check_grads(ours, theirs, {"x": X, "w": w})


def test_einsum_and_matmul():
    a, b, c = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(5,))

    def ours(v):
        ab = pdg.einsum("ijk,kl->ijl", v["a"], v["b"])
        return (pdg.tanh(ab) @ v["c"]).sum() + pdg.einsum("ijk->", v["a"])

    def theirs(v):
        ab = torch.einsum("ijk,kl->ijl", v["a"], v["b"])
        return (torch.tanh(ab) @ v["c"]).sum() + v["a"].sum()

    check_grads(ours, theirs, {"a": a, "b": b, "c": c})


def test_a_weights_transpose_is_made_once_per_point_of_its_domain():
    """The gradient of x @ W for x (rows of a point over t) is g @ W^T: W,
    over fewer dims than x, is read through one permuted copy over W's own
    domain (no dims here), so that each step's product has its output's
    last index last in an operand (the register-tiled form); the values
    match torch."""
    x, w = rng.normal(size=(5, 3, 4)), rng.normal(size=(4, 6))

    def ours(v):
        return pdg.tanh(v["x"] @ v["w"]).sum()

    def theirs(v):
        return torch.tanh(v["x"] @ v["w"]).sum()

    check_grads(ours, theirs, {"x": x, "w": w}, {"t": 5}, {"x": ["t"]})

    prog = pdg.Program("transposed")
    t = prog.dim("t", 5)
    xs = prog.input("x", (3, 4), "f64", domain=[t])
    ws = prog.input("w", (4, 6), "f64")
    (dx,) = grad(pdg.tanh(xs @ ws).sum(), [xs])
    prog.output("dx", dx)
    text = str(prog.build())
    permutes = [line for line in text.splitlines() if 'pdg.node "permute' in line]
    assert len(permutes) == 1, permutes
    assert '"permute" [] (%arg0 = %w[]' in permutes[0]
    assert "-> tensor<6x4xf64>" in permutes[0]


def test_einsum_index_of_one_operand_only():
    """'ij,k->i': j and k are summed inside one operand each."""
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(2,))
    check_grads(
        lambda v: (pdg.einsum("ij,k->i", v["a"], v["b"]) ** 2.0).sum(),
        lambda v: (torch.einsum("ij,k->i", v["a"], v["b"]) ** 2.0).sum(),
        {"a": a, "b": b},
    )


def test_softmax_and_log_softmax():
    w = rng.normal(size=(3, 4))
    check_grads(
        lambda v: (
            (pdg.softmax(v["x"], axis=0) * v["w"]).sum() + (pdg.log_softmax(v["x"]) * v["w"]).sum()
        ),
        lambda v: (
            (torch.softmax(v["x"], 0) * v["w"]).sum()
            + (torch.log_softmax(v["x"], -1) * v["w"]).sum()
        ),
        {"x": X, "w": w},
    )


def test_take_repeated_indices():
    table = rng.normal(size=(5, 3))
    ids = np.array([[1, 4], [1, 0]])

    def ours(v):
        idx = v["x"].program.constant_array(ids)
        return (pdg.tanh(pdg.take(v["t"], idx)) * v["w"]).sum()

    def theirs(v):
        return (torch.tanh(v["t"][torch.tensor(ids)]) * v["w"]).sum()

    check_grads(ours, theirs, {"t": table, "w": rng.normal(size=(2, 2, 3)), "x": X})


def test_take_along_an_inner_axis():
    table = rng.normal(size=(3, 5))
    ids = np.array([4, 0, 4])

    def ours(v):
        idx = v["t"].program.constant_array(ids)
        return (pdg.take(v["t"], idx, axis=1) ** 2.0).sum()

    def theirs(v):
        return (v["t"][:, torch.tensor(ids)] ** 2.0).sum()

    check_grads(ours, theirs, {"t": table})


def test_concat_reshape_permute_cast():
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(2, 2))

    def ours(v):
        c = pdg.concat([v["a"], v["b"]], axis=1)  # (2, 5)
        r = c.reshape(5, 2).permute(1, 0)  # (2, 5)
        return (r.astype("f32").astype("f64") * r).sum()

    def theirs(v):
        c = torch.cat([v["a"], v["b"]], 1)
        r = c.reshape(5, 2).permute(1, 0)
        return (r.float().double() * r).sum()

    check_grads(ours, theirs, {"a": a, "b": b})


def test_layer_norm_composite():
    g, b = rng.normal(size=(4,)), rng.normal(size=(4,))

    def ours(v):
        x = v["x"]
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) * (x - mu)).mean(axis=-1, keepdims=True)
        y = (x - mu) * pdg.rsqrt(var + 1e-5) * v["g"] + v["b"]
        return (y * y * y).sum()

    def theirs(v):
        y = torch.nn.functional.layer_norm(v["x"], (4,), v["g"], v["b"], eps=1e-5)
        return (y**3).sum()

    check_grads(ours, theirs, {"x": X, "g": g, "b": b})


def test_mean_over_a_symbolic_slice():
    """A mean over a window whose size varies with t (a `?` axis)."""
    x = rng.normal(size=(5, 2))

    def ours(v):
        t = v["t"]
        return (v["x"][pdg.max(0, t - 2) : t + 1].mean(axis=0) ** 2.0).sum()

    def theirs(v):
        return sum((v["x"][max(0, t - 2) : t + 1].mean(0) ** 2).sum() for t in range(5))

    check_grads(ours, theirs, {"x": x}, dims={"t": 5}, domains={"x": ["t"]})
