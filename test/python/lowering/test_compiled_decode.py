"""The reference decode program compiled for the CPU (pdg.lowering ->
artifact -> pdg.runtime) against the interpreter: the same tokens, the
same per-sequence lengths, and logits within 1e-5 relative (max abs
difference over max abs value) in float32. Each program is compiled once
and run for several batches without recompiling."""

from __future__ import annotations

import numpy as np
import pdg.runtime
import pytest
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module

from lowering.ragged import assert_same

# Prompts of mixed lengths. With eos=5 and these weights, greedy decoding
# ends the second sequence of the first batch after 3 steps while the others
# run past 16 (the first growable capacity): stores double, outputs are ragged.
BATCHES = [
    [[1, 2, 3], [4], [5, 6]],
    [[7], [2, 9, 1], [3], [4, 4]],
    [[11]],
]
MAX_LEN = 24
EOS = 5


def _decode(pattern: str, **options):
    return small_decode(
        pattern, vocab=16, d_model=8, max_len=MAX_LEN, eos=EOS, prompt_width=3, **options
    )


@pytest.fixture(scope="module", params=["full", "window:3", "block:4", "window:3+sample"])
def compiled(request, tmp_path_factory):
    pattern, _, sample = request.param.partition("+")
    decode = _decode(pattern, sample_seed=7 if sample else None)
    text = str(decode.program.build())
    path = tmp_path_factory.mktemp("decode") / "decode.pdgx"
    compile_module(parse_text(text, "decode", make_context()), path)
    return request.param, decode, text, pdg.runtime.load(path)


def _relative_error(ref, got) -> float:
    if isinstance(ref, list):
        return max(_relative_error(a, b) for a, b in zip(ref, got, strict=True))
    assert ref.shape == got.shape
    return float(np.abs(ref - got).max() / np.abs(ref).max())


def check_against_interpreter(decode, text: str, program, prompts, limits=None) -> None:
    """Runs `program` and the interpreter on `text`: same lengths and
    tokens, logits within 1e-5 relative."""
    inputs = decode.inputs(decode.model.init_weights(seed=5, scale=0.7), prompts, limits)
    symbols = {"B": len(prompts)}
    ref = interpret(parse_text(text, "ref", make_context()), inputs, symbols=symbols)
    got = program.run(inputs, symbols)
    np.testing.assert_array_equal(np.asarray(ref.bounds["T"]), np.asarray(got.bounds["T"]))
    assert_same(got.outputs["tokens"], ref.outputs["tokens"])
    assert _relative_error(ref.outputs["logits"], got.outputs["logits"]) < 1e-5
    if limits is not None:
        assert all(n <= cap for n, cap in zip(np.atleast_1d(got.bounds["T"]), limits, strict=True))


@pytest.mark.parametrize("batch", range(len(BATCHES)))
def test_01_compiled_decode_matches_interpreter(compiled, batch):
    _, decode, text, program = compiled
    check_against_interpreter(decode, text, program, BATCHES[batch])


def test_02_sequences_end_on_their_own_and_outputs_are_ragged(compiled):
    config, decode, _, program = compiled
    inputs = decode.inputs(decode.model.init_weights(seed=5, scale=0.7), BATCHES[0])
    got = program.run(inputs, {"B": 3})
    lengths = got.bounds["T"].tolist()
    assert max(lengths) > 16  # the growable stores grew
    if "sample" in config:
        return
    assert min(lengths) < max(lengths)
    tokens = got.outputs["tokens"]
    assert isinstance(tokens, list)
    assert [len(t) for t in tokens] == lengths
    for t, n in zip(tokens, lengths, strict=True):
        assert t[-1] == EOS or n == MAX_LEN
        assert EOS not in t[:-1].tolist()


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    decode = _decode("window:3", response_limit=True)
    text = str(decode.program.build())
    path = tmp_path_factory.mktemp("limited") / "decode.pdgx"
    compile_module(parse_text(text, "decode", make_context()), path)
    return decode, text, pdg.runtime.load(path)


@pytest.mark.parametrize(
    "prompts, limits",
    [([[1, 2, 3], [4], [5, 6]], [6, 20, 24]), ([[7], [2, 9]], [1, 9]), ([[4]], [17])],
)
def test_03_one_artifact_many_batches_and_response_limits(limited, prompts, limits):
    decode, text, program = limited
    check_against_interpreter(decode, text, program, prompts, limits)
