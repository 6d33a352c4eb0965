"""Memory: the runtime reports the peak bytes of a run (the inputs plus the
most the compiled code had allocated at once), which matches the
compiler's memory plan within 10%, and a memory limit refuses a run whose
planned peak exceeds it before anything is allocated."""

from __future__ import annotations

import numpy as np
import pdg.runtime
import pytest
from decode_programs import small_decode
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.runtime import RunError
from pdg.runtime.formula import evaluate, from_json

MAX_LEN = 300


@pytest.fixture(scope="module", params=["full", "window:16"])
def decode(request, tmp_path_factory):
    # eos = -1 is never sampled: every sequence runs to the max.
    d = small_decode(
        request.param, vocab=256, d_model=64, heads=4, max_len=MAX_LEN, eos=-1, prompt_width=2
    )
    path = tmp_path_factory.mktemp("memory") / "decode.pdgx"
    compile_module(parse_text(str(d.program.build()), "decode", make_context()), path)
    return d, pdg.runtime.load(path)


@pytest.mark.parametrize("batch", [1, 3])
def test_01_reported_peak_matches_the_plan(decode, batch):
    d, program = decode
    inputs = d.inputs(d.model.init_weights(seed=1), [[1, 2]] * batch)
    result = program.run(inputs, {"B": batch})
    assert result.bounds["T"].tolist() == [MAX_LEN] * batch
    planned = evaluate(from_json(program.manifest["memory"]["peak"]), {"B": batch, "T": MAX_LEN})
    assert abs(result.peak_bytes - planned) <= 0.1 * planned, (result.peak_bytes, planned)


def test_02_a_run_over_the_limit_is_refused_before_it_starts(decode, monkeypatch):
    d, program = decode
    inputs = d.inputs(d.model.init_weights(seed=1), [[1, 2]])
    planned, text, _ = program.planned_peak({"B": 1})
    with pytest.raises(RunError) as e:
        program.run(inputs, {"B": 1}, memory_limit=planned - 1)
    message = str(e.value)
    assert f"the planned peak memory {planned} bytes" in message
    assert (
        f"exceeds memory_limit = {planned - 1} bytes: peak = {text} at B=1, T={MAX_LEN}" in message
    )
    monkeypatch.setenv("PDG_MEMORY_LIMIT", "1K")
    with pytest.raises(RunError, match="exceeds PDG_MEMORY_LIMIT = 1024 bytes"):
        program.run(inputs, {"B": 1})
    monkeypatch.setenv("PDG_MEMORY_LIMIT", "lots")
    with pytest.raises(RunError, match="PDG_MEMORY_LIMIT: 'lots' is not a byte count"):
        program.run(inputs, {"B": 1})
    monkeypatch.setenv("PDG_MEMORY_LIMIT", "1G")
    assert program.run(inputs, {"B": 1}).bounds["T"].tolist() == [MAX_LEN]


def test_03_every_run_starts_from_zero(decode):
    d, program = decode
    inputs = d.inputs(d.model.init_weights(seed=1), [[1, 2]])
    first = program.run(inputs, {"B": 1}).peak_bytes
    second = program.run(inputs, {"B": 1}).peak_bytes
    assert first == second
    assert np.all(np.isfinite(program.run(inputs, {"B": 1}).outputs["logits"]))
