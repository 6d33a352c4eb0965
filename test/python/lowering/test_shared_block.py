"""Stores that take turns in one block (pdg.lowering.arena): the placement
never lets two stores that are live at once overlap, temporaries of an
iteration share bytes, and the programs compute what the interpreter does
where a store is read at another step of a loop (it must keep its bytes
across the loop's steps)."""

from __future__ import annotations

import json

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.interpreter import interpret
from pdg.lowering.arena import ALIGN, place
from pdg.lowering.artifact import compile_module


def test_placement_keeps_live_stores_apart_and_aligned():
    rng = np.random.default_rng(0)
    for _ in range(50):
        items = []
        for _ in range(int(rng.integers(1, 30))):
            first = int(rng.integers(0, 40))
            items.append((int(rng.integers(1, 5000)), first, first + int(rng.integers(0, 10))))
        offsets, total = place(items)
        assert total % ALIGN == 0
        for k, (size, first, last) in enumerate(items):
            assert offsets[k] % ALIGN == 0 and offsets[k] + size <= total
            for j in range(k):
                size_j, first_j, last_j = items[j]
                if first <= last_j and first_j <= last:  # live at once: apart in bytes
                    assert offsets[k] + size <= offsets[j] or offsets[j] + size_j <= offsets[k]


def test_stores_that_live_one_after_the_other_share_bytes():
    offsets, total = place([(1000, 0, 1), (3000, 2, 3), (500, 4, 5), (100, 1, 2)])
    assert offsets[:3] == [0, 0, 0]
    # The last lives with the first and the second: past both, aligned.
    assert offsets[3] == 3008
    assert total == 3136


def iteration_with_temporaries(carried: bool) -> pf.Program:
    """w[i] = w[i - 1] + 0.1 e[i], where e is the last of a chain of
    (16, 16) temporaries of the iteration, from w[i - 1]. With `carried`, the update
    also reads e at the step before: e must keep its bytes across steps."""
    prog = pf.Program("chain" + ("_carried" if carried else ""))
    i = prog.dim("i", launch="I")
    w0 = prog.input("w0", (16, 16), "f32")
    w = prog.recurrent((16, 16), "f32", domain=[i], name="w")
    a = prog.recurrent((16, 16), "f32", domain=[i], name="a")
    a[i == 0] = w0 * 2.0
    a[i > 0] = w[i - 1] * 2.0
    b = (pf.tanh(a) @ a).named("b")
    c = (pf.tanh(b) @ b).named("c")
    d = (pf.tanh(c) @ c * 0.5 + a).named("d")
    e = pf.tanh(d).named("e")
    w[i == 0] = w0 + e * 0.1
    if carried:
        e_prev = prog.recurrent((16, 16), "f32", domain=[i], name="e_prev")
        e_prev[i == 0] = w0
        e_prev[i > 0] = e[i - 1]
        w[i > 0] = w[i - 1] + e * 0.1 + e_prev * 0.05
    else:
        w[i > 0] = w[i - 1] + e * 0.1
    # After the update, a larger temporary (placed first): while e is kept
    # for the next step it must not take e's bytes.
    wide = prog.input("wide", (16, 64), "f32")
    z = (pf.tanh(w) @ wide).named("z")
    prog.output("w", w)
    prog.output("y", (pf.tanh(z) @ pf.transpose(wide)).named("y"))
    prog.output("y2", (z @ pf.transpose(wide)).named("y2"))  # z has two readers: not fused
    return prog


@pytest.mark.parametrize("carried", [False, True])
def test_compiled_temporaries_share_a_block_and_agree(tmp_path, carried):
    prog = iteration_with_temporaries(carried)
    rng = np.random.default_rng(1)
    inputs = {
        "w0": (rng.standard_normal((16, 16)) * 0.3).astype(np.float32),
        "wide": (rng.standard_normal((16, 64)) * 0.3).astype(np.float32),
    }
    want = interpret(prog.build(), inputs, symbols={"I": 4}).outputs
    path = tmp_path / "p.pdgx"
    compile_module(prog.build(), path, gpu=False)
    got = pdg.runtime.load(path).run(inputs, {"I": 4}).outputs
    # Float32 products and tanh round differently from the interpreter's
    # (up to ~6e-5 here with or without the block); a store overwritten
    # while live is off by 0.1 or more.
    for name in ("w", "y", "y2"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4, err_msg=name)
    manifest = json.loads((path / "manifest.json").read_text())
    shared = manifest["abi"]["shared"]
    # The iteration's temporaries (what fusion leaves of a to e) live in
    # turns: the block holds less than they do apart.
    assert len(shared["stores"]) >= 3
    assert 0 < shared["bytes"] < shared["apart"]
    assert manifest["memory"]["shared"] == {"bytes": shared["bytes"], "apart": shared["apart"]}
