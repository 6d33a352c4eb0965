"""Backpropagation through time: a recurrence over t (an RNN-like cell)
gets a backward recurrence over t, from the last step to the first."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pdg.frontend as pdg  # noqa: E402

from .gradcheck import check_grads  # noqa: E402

rng = np.random.default_rng(5)
T, B, D = 7, 2, 3


def test_rnn_cell_over_t():
    """h[t] = tanh(W h[t - 1] + U x[t] + c), loss sum_t |h[t]|^2 weighted by t."""
    arrays = {
        "x": rng.normal(size=(B, T, D)),
        "W": rng.normal(size=(D, D)) * 0.6,
        "U": rng.normal(size=(D, D)),
        "c": rng.normal(size=(D,)),
        "h0": rng.normal(size=(D,)),
    }

    def ours(v):
        b, t, x = v["b"], v["t"], v["x"]
        h = x.program.recurrent((D,), "f64", domain=[b, t], name="h")
        drive = v["U"] @ x + v["c"]
        h[t == 0] = pdg.tanh(v["W"] @ v["h0"] + drive)
        h[t > 0] = pdg.tanh(v["W"] @ h[t - 1] + drive)
        weight = (x.program.coordinate(t) + 1).astype("f64")
        return (h * h).sum() * weight

    def theirs(v):
        total = 0
        for b in range(B):
            h = v["h0"]
            for t in range(T):
                h = torch.tanh(v["W"] @ h + v["U"] @ v["x"][b, t] + v["c"])
                total = total + (h * h).sum() * (t + 1)
        return total

    check_grads(ours, theirs, arrays, {"b": "B", "t": T}, {"x": ["b", "t"]}, {"B": B})


def test_recurrence_reading_two_steps_back():
    """s[t] = a s[t - 1] + b s[t - 2] + x[t]: the gradient reads t + 1 and t + 2."""
    arrays = {"x": rng.normal(size=(T,)), "ab": np.array([0.5, -0.3])}

    def ours(v):
        t, x = v["t"], v["x"]
        s = x.program.recurrent((), "f64", domain=[t], name="s")
        a = pdg.take(v["ab"], x.program.constant_array(np.int64(0)))
        b = pdg.take(v["ab"], x.program.constant_array(np.int64(1)))
        s[t == 0] = x
        s[t == 1] = x + s[t - 1] * a
        s[t >= 2] = x + s[t - 1] * a + s[t - 2] * b
        return pdg.sin(s)

    def theirs(v):
        s = []
        for t in range(T):
            val = v["x"][t]
            if t >= 1:
                val = val + s[t - 1] * v["ab"][0]
            if t >= 2:
                val = val + s[t - 2] * v["ab"][1]
            s.append(val)
        return sum(torch.sin(z) for z in s)

    check_grads(ours, theirs, arrays, {"t": T}, {"x": ["t"]})
