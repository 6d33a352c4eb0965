"""Recurrences and slice accesses (programs/scan.mlir, windows.mlir)."""

from __future__ import annotations

import numpy as np

from .helpers import run


def _scan_inputs(rng, batch: int = 3):
    a = rng.standard_normal(10).astype(np.float32)
    ab = rng.integers(-5, 5, size=(batch, 10)).astype(np.int64)
    return {"a": a, "ab": ab}


def test_scan_with_base_case(rng):
    inputs = _scan_inputs(rng)
    r = run("scan", inputs, symbols={"B": 3})
    x = r.outputs["x"]
    assert x.dtype == np.float32 and x.shape == (10,)
    # cumsum adds sequentially in float32, as the recurrence does.
    np.testing.assert_array_equal(x, np.cumsum(inputs["a"], dtype=np.float32))
    assert r.stats["x"] == 10


def test_two_node_recurrence(rng):
    r = run("scan", _scan_inputs(rng), symbols={"B": 3})
    fib = [1, 1]
    while len(fib) < 10:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(r.outputs["f"], np.array(fib, np.int64))
    assert r.stats["f"] == 10 and r.stats["g"] == 9  # g[9] is never read


def test_batch_dims(rng):
    inputs = _scan_inputs(rng, batch=4)
    r = run("scan", inputs, symbols={"B": 4})
    ab = inputs["ab"]
    expected = np.zeros_like(ab)
    expected[:, 0] = ab[:, 0]
    for t in range(1, 10):
        expected[:, t] = 2 * expected[:, t - 1] + ab[:, t]
    np.testing.assert_array_equal(r.outputs["y"], expected)
    assert r.outputs["y"].shape == (4, 10)


def test_sliding_window(rng):
    a = rng.standard_normal(11).astype(np.float32)
    r = run("windows", {"a": a})
    expected = [a[max(0, t - 3) : t + 1].sum(dtype=np.float32) for t in range(11)]
    np.testing.assert_allclose(r.outputs["window"], expected, rtol=1e-6)


def test_block_prefix(rng):
    a = rng.standard_normal(11).astype(np.float32)
    r = run("windows", {"a": a})
    expected = [a[(t // 4) * 4 : t + 1].sum(dtype=np.float32) for t in range(11)]
    np.testing.assert_allclose(r.outputs["block"], expected, rtol=1e-6)


def test_full_prefix(rng):
    a = rng.standard_normal(11).astype(np.float32)
    r = run("windows", {"a": a})
    out = r.outputs["prefix_max"]
    assert out.shape == (11, 2)
    np.testing.assert_array_equal(out[:, 0], np.maximum.accumulate(a))
    np.testing.assert_array_equal(out[:, 1], np.arange(1, 12, dtype=np.float32))


def test_empty_slice(rng):
    a = rng.standard_normal(11).astype(np.float32)
    r = run("windows", {"a": a})
    expected = [a[:t].sum(dtype=np.float32) for t in range(11)]
    assert r.outputs["before"][0] == 0  # a[0 : 0] reads nothing
    np.testing.assert_allclose(r.outputs["before"], expected, rtol=1e-6, atol=1e-6)


def test_case_on_a_launch_symbol_and_default():
    r = run("cases", {}, symbols={"B": 4})
    np.testing.assert_array_equal(r.outputs["x"], [0, 1, 2, 100])
