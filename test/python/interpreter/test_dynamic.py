"""Dynamic dims ended per group by `until`, and examples/decode_step.mlir."""

from __future__ import annotations

import numpy as np
import pytest
from pdg.interpreter import interpret

from .helpers import REPO, run


def _counts(start, limit, cap=16):
    """c[b, t] = start[b] + 3 t, until c >= limit (at most `cap` steps)."""
    out = []
    for s, lim in zip(start, limit, strict=True):
        seq = []
        for t in range(cap):
            seq.append(s + 3 * t)
            if seq[-1] >= lim:
                break
        out.append(np.array(seq, np.int64))
    return out


def test_ragged_outputs_and_bounds():
    start = np.array([0, 5, 1], np.int64)
    limit = np.array([7, 5, 100], np.int64)
    r = run("dynamic", {"start": start, "limit": limit}, symbols={"B": 3})
    expected = _counts(start, limit)
    c = r.outputs["c"]
    assert isinstance(c, list) and len(c) == 3
    for got, want in zip(c, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(r.bounds["T"], [4, 1, 16])
    done = r.outputs["done"]
    assert [d.tolist() for d in done][:2] == [[False, False, False, True], [True]]
    assert not done[2].any()  # never true: ended by the max of 16 steps


def test_reader_of_the_whole_sequence_through_T():
    start = np.array([0, 5, 1], np.int64)
    limit = np.array([7, 5, 100], np.int64)
    r = run("dynamic", {"start": start, "limit": limit}, symbols={"B": 3})
    expected = _counts(start, limit)
    np.testing.assert_array_equal(r.outputs["total"], [e.sum() for e in expected])
    np.testing.assert_array_equal(r.outputs["last"], [e[-1] for e in expected])


def test_equal_lengths_give_one_array():
    start = np.array([0, 1], np.int64)
    limit = np.array([6, 7], np.int64)
    r = run("dynamic", {"start": start, "limit": limit}, symbols={"B": 2})
    assert isinstance(r.outputs["c"], np.ndarray)
    np.testing.assert_array_equal(r.outputs["c"], [[0, 3, 6], [1, 4, 7]])
    np.testing.assert_array_equal(r.bounds["T"], [3, 3])


def test_max_steps_caps_the_declared_max():
    start = np.array([0], np.int64)
    limit = np.array([1000], np.int64)
    r = run("dynamic", {"start": start, "limit": limit}, symbols={"B": 1}, max_steps=5)
    np.testing.assert_array_equal(r.outputs["c"], [[0, 3, 6, 9, 12]])
    np.testing.assert_array_equal(r.bounds["T"], [5])
    assert r.stats["done"] == 5


# --- examples/decode_step.mlir ---------------------------------------------------


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def decode_reference(w: dict, steps: int) -> tuple[list[list[int]], list[np.ndarray]]:
    """The decode_step program, written directly in NumPy: greedy decoding
    with attention over a window of the last 16 steps, stopping after EOS."""
    wte = w["wte"]
    tokens, logits = [], []
    for tok in w["prompt"]:
        keys, values, toks, logs = [], [], [], []
        for t in range(steps):
            h = wte[tok]
            q, k, v = h @ w["wq"], h @ w["wk"], h @ w["wv"]
            keys.append(k)
            values.append(v)
            lo = max(0, t - 15)
            p = _softmax(np.array(keys[lo:]) @ q)
            out = wte @ (p @ np.array(values[lo:]))
            tok = int(np.argmax(out))
            toks.append(tok)
            logs.append(out)
            if tok == 0:
                break
        tokens.append(toks)
        logits.append(np.array(logs))
    return tokens, logits


def _weights(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    w = {"wte": rng.standard_normal((64, 32)).astype(np.float32)}
    for name in ("wq", "wk", "wv"):
        w[name] = rng.standard_normal((32, 32)).astype(np.float32)
    w["prompt"] = rng.integers(1, 64, size=2).astype(np.int64)
    return w


def _as_list(out) -> list:
    return [np.asarray(x) for x in out] if isinstance(out, list) else list(out)


# Seed 0 runs all 8 steps in both sequences; with seed 39 sequence 0 emits
# EOS at step 2 (ragged outputs); 20 steps slide the attention window.
@pytest.mark.parametrize("seed, steps", [(0, 8), (39, 8), (0, 20)])
def test_decode_step_matches_numpy(seed, steps):
    w = _weights(seed)
    r = interpret(REPO / "examples" / "decode_step.mlir", w, symbols={"B": 2}, max_steps=steps)
    tokens, logits = decode_reference(w, steps)
    got = _as_list(r.outputs["tokens"])
    assert [g.tolist() for g in got] == tokens
    for g, want in zip(_as_list(r.outputs["logits"]), logits, strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(r.bounds["T"], [len(t) for t in tokens])
    assert r.stats["unused"] == 0  # nothing demands the dead node
    if seed == 39:
        assert isinstance(r.outputs["tokens"], list) and len(tokens[0]) < steps
