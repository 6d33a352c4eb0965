"""Gradients through accesses: the gradient at a producer point sums the
contributions of every consumer point that reads it (the inverse of the
access), with the right edges at the ends of the dims."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pdg.frontend as pdg  # noqa: E402

from .gradcheck import check_grads  # noqa: E402

rng = np.random.default_rng(3)
T, B, D = 6, 2, 3
XS = rng.normal(size=(B, T, D))
W = rng.normal(size=(D,))
OVER_BT = {"b": "B", "t": T}
DOMAINS = {"x": ["b", "t"]}
SYMBOLS = {"B": B}


def test_shifted_reads_with_guards():
    """y[t] = x[t] * x[t - 1] for t > 0, x[t] * x[t + 1] for t < T - 1."""

    def ours(v):
        t, x = v["t"], v["x"]
        y = v["x"].program.recurrent((D,), "f64", domain=[v["b"], t])
        y[t == 0] = x * x[t + 1]
        y[t > 0] = x * x[t - 1] * v["w"]
        return (pdg.tanh(y) * x).sum()

    def theirs(v):
        x = v["x"]
        y0 = x[:, :1] * x[:, 1:2]
        y1 = x[:, 1:] * x[:, :-1] * v["w"]
        return (torch.tanh(torch.cat([y0, y1], 1)) * x).sum()

    check_grads(ours, theirs, {"x": XS, "w": W}, OVER_BT, DOMAINS, SYMBOLS)


def test_fixed_points_first_and_last():
    """Every t reads x[0] and x[T - 1] (a static bound)."""

    def ours(v):
        x = v["x"]
        return (x * x[v["b"], 0] + pdg.sin(x[v["b"], T - 1]) * x).sum()

    def theirs(v):
        x = v["x"]
        return (x * x[:, :1] + torch.sin(x[:, -1:]) * x).sum()

    check_grads(ours, theirs, {"x": XS}, OVER_BT, DOMAINS, SYMBOLS)


def test_constant_slice_and_whole_dim():
    """x[b, 1 : 4] (constant bounds) and x[0 : B, t] (a launch dim, whole)."""

    def ours(v):
        x, b, t = v["x"], v["b"], v["t"]
        part = (x[b, 1:4] * v["w"]).sum(axis=0)  # (D,) per b
        across = x[0 : b.size, t].sum(axis=0)  # (D,) per t
        # a loss over [b] plus one over [t]: a loss over [b, t]
        return (part * part).sum() + (pdg.tanh(across) * across).sum()

    def theirs(v):
        x = v["x"]
        part = (x[:, 1:4] * v["w"]).sum(1)
        across = x.sum(0)
        # summed over the points of [b, t]: each term repeats along the other dim
        return T * (part * part).sum() + B * (torch.tanh(across) * across).sum()

    check_grads(ours, theirs, {"x": XS, "w": W}, OVER_BT, DOMAINS, SYMBOLS)


PATTERNS = {
    "window": (lambda t: pdg.max(0, t - 2), lambda t: t + 1, lambda t: (max(0, t - 2), t + 1)),
    "prefix": (lambda t: 0, lambda t: t + 1, lambda t: (0, t + 1)),
    "block": (lambda t: (t // 4) * 4, lambda t: t + 1, lambda t: ((t // 4) * 4, t + 1)),
    # ends two steps ahead (t + 2), so only t < T - 1 reads it
    "ahead": (lambda t: pdg.max(0, t - 1), lambda t: t + 2, lambda t: (max(0, t - 1), t + 2)),
}


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_slices_along_the_consumer_dim(pattern):
    """Attention-like: softmax-weighted sum over a slice of a computed value."""
    lo, hi, bounds = PATTERNS[pattern]

    def ours(v):
        t, x = v["t"], v["x"]
        k = pdg.tanh(x * v["w"]).named("k")
        if pattern == "ahead":
            y = x.program.recurrent((D,), "f64", domain=[v["b"], t])
            y[t < T - 1] = _attend(k[lo(t) : hi(t)], x)
            y[...] = x
        else:
            y = _attend(k[lo(t) : hi(t)], x)
        return (y * y).sum()

    def theirs(v):
        x = v["x"]
        k = torch.tanh(x * v["w"])
        total = 0
        for b in range(B):
            for t in range(T):
                if pattern == "ahead" and t == T - 1:
                    total = total + (x[b, t] ** 2).sum()
                    continue
                a, e = bounds(t)
                s = torch.softmax(k[b, a:e] @ x[b, t], 0)
                total = total + ((s @ k[b, a:e]) ** 2).sum()
        return total

    check_grads(ours, theirs, {"x": XS, "w": W}, OVER_BT, DOMAINS, SYMBOLS)


def _attend(keys, query):
    scores = pdg.einsum("sd,d->s", keys, query)
    return pdg.einsum("s,sd->d", pdg.softmax(scores, axis=0), keys)


def test_read_along_another_dim_of_the_same_size():
    """x over [s] read as x[t] by a value over [t]."""

    def ours(v):
        y = v["x"].program.recurrent((), "f64", domain=[v["t"]])
        y[...] = v["x"][v["t"]]
        return y * y * v["t"].program.coordinate(v["t"]).astype("f64")

    def theirs(v):
        return (v["x"] ** 2 * torch.arange(T, dtype=torch.float64)).sum()

    check_grads(ours, theirs, {"x": rng.normal(size=(T,))}, {"s": T, "t": T}, {"x": ["s"]})
