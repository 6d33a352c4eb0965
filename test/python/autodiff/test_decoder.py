"""Gradients of a 2-layer GPT-style decoder's next-token loss, with full,
window and block attention, against PyTorch autograd in float64."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from pdg.interpreter import interpret  # noqa: E402

from .decoder import B, data, loss_gradients_program, torch_gradients, worst_error  # noqa: E402

PATTERNS = ["full", "window:3", "block:4"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_decoder_gradients_interpreted_float64(pattern):
    prog, model = loss_gradients_program(pattern, "f64")
    weights = model.init_weights(seed=3, scale=0.5)
    tokens, targets = data()
    inputs = {**model.inputs_from(weights), "tokens": tokens, "targets": targets}
    result = interpret(prog.build(), inputs, symbols={"B": B})
    loss, expected = torch_gradients(weights, pattern, tokens, targets)
    assert abs(float(result.outputs["loss"]) - loss) < 1e-12 * abs(loss)
    assert worst_error(result.outputs, expected) < 1e-8


@pytest.mark.parametrize("pattern", PATTERNS)
def test_key_and_value_gradients_pad_only_the_scores(pattern):
    """The keys' and values' gradients go through the attention window
    without storing each position's (window x heads x head dim) part: only
    the (window x heads) factor is padded (transpose_einsum), and no
    diagonal_sum of padded parts remains."""
    import re

    text = str(loss_gradients_program(pattern, "f64")[0].build())
    padded = re.findall(
        r'pdg\.node "pad_front[^"]*" \[b, t\] .*-> tensor<(\d+)x(\d+)x(\d+)xf64>', text
    )
    assert len(padded) == 4  # keys and values of 2 layers
    assert all(heads == "2" and query == "1" for _, heads, query in padded)
    assert "diagonal_sum" not in text
