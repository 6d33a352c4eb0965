"""The decode program vectorized (pdg-vectorize: one step for the whole
batch), compiled, and run for several batches: the same tokens and
lengths as the interpreter on the original program, logits within 1e-5
relative. Batched values have a symbolic point dim (B) that the lowering
sizes from the launch symbol (B rows, also with a window of 3 at B > 3:
the storage plan follows each dim's own source)."""

from __future__ import annotations

import pdg.runtime
import pytest
from decode_programs import small_decode
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.passes.pipeline import parse_pipeline, run_pipeline

from .test_compiled_decode import BATCHES, EOS, MAX_LEN, check_against_interpreter


@pytest.fixture(scope="module", params=["full", "window:3+sample"])
def vectorized(request, tmp_path_factory):
    pattern, _, sample = request.param.partition("+")
    decode = small_decode(
        pattern,
        vocab=16,
        d_model=8,
        max_len=MAX_LEN,
        eos=EOS,
        prompt_width=3,
        sample_seed=7 if sample else None,
    )
    text = str(decode.program.build())
    module = parse_text(text, "decode", make_context())
    assert run_pipeline(module, parse_pipeline("builtin.module(pdg-vectorize)")) == []
    assert '"logits" [t]' in str(module)
    path = tmp_path_factory.mktemp("vectorized") / "decode.pdgx"
    compile_module(module, path)
    return decode, text, pdg.runtime.load(path)


@pytest.mark.parametrize("batch", range(len(BATCHES)))
def test_01_vectorized_decode_matches_interpreter(vectorized, batch):
    decode, text, program = vectorized
    check_against_interpreter(decode, text, program, BATCHES[batch])
