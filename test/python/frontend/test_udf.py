"""A host callback (UDF) from a plain Python function: a reward on each
finished sequence of tokens, called by the interpreter once per sequence."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pdg
from pdg.interpreter import interpret


def test_01_reward_on_finished_sequences():
    calls = []

    def reward(tokens):
        calls.append(tokens.copy())
        return float((tokens == 7).sum())  # counts the "good" token

    prog = pdg.Program("rl")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", dynamic="T", max=10)
    start = prog.input("start", (), "i64", domain=[b])
    tok = ((prog.coordinate(t) * 3 + start) % 10).named("tok")
    t.until(tok.eq(1))
    r = prog.udf(reward, [tok[b, 0 : t.size]], (), "f32")
    prog.output("reward", r)
    prog.output("tokens", tok)
    result = interpret(
        prog.build(), {"start": np.array([4, 7, 0])}, symbols={"B": 3}, udfs=prog.udfs
    )
    expected = []
    for s in (4, 7, 0):
        seq = []
        for step in range(10):
            seq.append((step * 3 + s) % 10)
            if seq[-1] == 1:
                break
        expected.append(np.array(seq))
    for got, want in zip(result.outputs["tokens"], expected, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        result.outputs["reward"], [float((e == 7).sum()) for e in expected]
    )
    assert len(calls) == 3
    np.testing.assert_array_equal(calls[0], expected[0])
