"""pdg-contract-reductions on real gradient programs: the decoder's weight
gradients (sums over b and t of per-point products) become contractions,
and every output is unchanged (float64 interpreter, before and after)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.passes.pipeline import parse_pipeline, run_pipeline

from .decoder import B, data, loss_gradients_program

# A node over [b, t] whose point has a weight matrix's shape (d_model 8, MLP
# 32, vocab 11): a per-point product summed into that weight's gradient.
WEIGHT_OVER_BT = re.compile(r'pdg\.node "[^"]*" \[b, t\] .*-> tensor<(8x8|8x32|32x8|11x8)xf64> \{')


def summed_products(text: str) -> int:
    return len(WEIGHT_OVER_BT.findall(text))


@pytest.mark.parametrize("pattern", ["full", "window:3"])
def test_gradients_unchanged_and_contracted(pattern):
    prog, model = loss_gradients_program(pattern, "f64")
    text = str(prog.build())
    weights = model.init_weights(seed=3, scale=0.5)
    tokens, targets = data()
    inputs = {**model.inputs_from(weights), "tokens": tokens, "targets": targets}
    ctx = make_context()
    before = interpret(parse_text(text, "before", ctx), inputs, symbols={"B": B})
    module = parse_text(text, "after", ctx)
    assert run_pipeline(module, parse_pipeline("builtin.module(pdg-contract-reductions)")) == []
    after_text = str(module)
    # q, k, v, o, fc, proj per layer, and the embedding table twice: its
    # lookup and the tied head, which reads the table as stored
    # (nn.layers.tied_logits): all contracted.
    assert summed_products(text) == 14
    assert summed_products(after_text) == 0
    after = interpret(module, inputs, symbols={"B": B})
    assert before.outputs.keys() == after.outputs.keys()
    for name, value in before.outputs.items():
        np.testing.assert_allclose(after.outputs[name], value, rtol=1e-12, atol=1e-14)
