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
