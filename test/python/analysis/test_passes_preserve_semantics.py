"""Every pass leaves a program's outputs unchanged: the reference decode
program (full, window and block attention) is interpreted before and after
each pass and each whole pipeline, and the outputs must be identical."""

from __future__ import annotations

import numpy as np
import pytest
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.passes.pipeline import parse_pipeline, run_pipeline

PIPELINES = [
    "canonicalize",
    "pdg-dce",
    "pdg-dedup",
    "pdg-incrementalize",
    "pdg-fuse",
    "pdg-check-legality",
    "pdg-plan-storage",
    "pdg-schedule",
    "pdg-dedup,pdg-dce,canonicalize,pdg-plan-storage,pdg-schedule",
    "pdg-dedup,pdg-dce,canonicalize,pdg-fuse,pdg-plan-storage,pdg-schedule",
    "pdg-vectorize",
    "pdg-vectorize,canonicalize,pdg-dce,pdg-plan-storage,pdg-schedule",
]
PROMPTS = [[1, 2, 3], [4], [5, 6]]


def decode_case(pattern: str):
    decode = small_decode(
        pattern, vocab=16, d_model=8, max_len=10, dtype="f64", eos=3, prompt_width=3
    )
    text = str(decode.program.build())
    inputs = decode.inputs(decode.model.init_weights(seed=5, scale=0.7), PROMPTS)
    return text, inputs


def same(a, b) -> None:
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            same(x, y)
        return
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("pattern", ["full", "window:3", "block:2"])
@pytest.mark.parametrize("pipeline", PIPELINES)
def test_01_pass_keeps_decode_outputs(pattern, pipeline):
    text, inputs = decode_case(pattern)
    ctx = make_context()
    before = interpret(parse_text(text, "before", ctx), inputs, symbols={"B": 3})
    module = parse_text(text, "after", ctx)
    assert run_pipeline(module, parse_pipeline(f"builtin.module({pipeline})")) == []
    after = interpret(module, inputs, symbols={"B": 3})
    assert before.outputs.keys() == after.outputs.keys()
    for name in before.outputs:
        same(before.outputs[name], after.outputs[name])
    same(before.bounds["T"], after.bounds["T"])
