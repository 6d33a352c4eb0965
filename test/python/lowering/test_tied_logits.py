"""Logits against a tied embedding table read the table as it is stored.

`h @ table.T` used to be a product with a transposed operand: the graph
held the table's transpose as a store of its own, made once per run, so a
tied model kept its (vocab, d) table twice (544 MB more at Qwen2.5-0.5B's
151936 x 896). pdg.nn.layers.tied_logits writes the head as one product
over the last dim of both (`einsum('d,vd->v')`), which
pdg-register-tile-contractions runs in dot form: rows of the table read
end to end into vector accumulators, summed across lanes.

Checked here on a decode program whose sizes leave remainders everywhere
(d_model 76: 9 vectors of 8 and 4 products; vocab 1030: 257 tiles of 4
entries and 2 left): no store of the program is the table's transpose,
and the compiled program, with f32 and bf16 tables, at batch 1 and 3,
gives the interpreter's tokens and logits within 1e-5 of their scale."""

from __future__ import annotations

import json

import numpy as np
import pytest
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.runtime import load

SHAPE = {"vocab": 1030, "d_model": 76, "heads": 4, "layers": 2, "max_len": 12}
STEPS = 6
WEIGHT_SCALE = 0.3


@pytest.fixture(scope="module", params=["f32", "bf16"])
def build(request, tmp_path_factory):
    kind = request.param
    decode = small_decode(
        "full",
        **SHAPE,
        eos=None,
        prompt_width=2,
        response_limit=True,
        weight_dtype=None if kind == "f32" else "bf16",
    )
    text = str(decode.program.build())
    path = tmp_path_factory.mktemp(kind) / "d.pdgx"
    compile_module(parse_text(text, "decode", make_context()), path, gpu=False)
    weights = small_decode(
        "full", **SHAPE, eos=None, prompt_width=2, response_limit=True
    ).model.init_weights(seed=3, scale=WEIGHT_SCALE)
    return decode, text, path, weights


def test_no_store_holds_the_transposed_table(build):
    _, text, path, _ = build
    assert "permute" not in text
    stores = json.loads((path / "manifest.json").read_text())["stores"]
    d, v = SHAPE["d_model"], SHAPE["vocab"]
    assert [str(d), str(v)] not in [s["point"] for s in stores]


@pytest.mark.parametrize("batch", [1, 3])
def test_compiled_logits_equal_the_interpreter(build, batch):
    decode, text, path, weights = build
    prompts = [[1, 2], [7], [3, 9]][:batch]
    inputs = decode.inputs(weights, prompts, [STEPS] * batch)
    symbols = {"B": batch}
    ref = interpret(parse_text(text, "ref", make_context()), inputs, symbols=symbols)
    got = load(path).run(inputs, symbols).outputs
    for a, b in zip(ref.outputs["tokens"], got["tokens"], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    ref_logits = np.concatenate([np.asarray(x) for x in ref.outputs["logits"]])
    logits = np.concatenate([np.asarray(x) for x in got["logits"]])
    assert logits.shape == ref_logits.shape == (batch * STEPS, SHAPE["vocab"])
    assert np.abs(logits - ref_logits).max() / np.abs(ref_logits).max() < 1e-5
