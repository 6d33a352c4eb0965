"""Hugging Face checkpoints of every supported family (GPT-2, Llama with
Llama 3.1 RoPE scaling, Mistral with a window shorter than the sequence,
Qwen2 in bf16 with a per-layer window, Qwen3 sharded), made by
transformers, read by pdg.models and run by pdg's decoder:

- the weights land where transformers has them (exactly);
- logits per position within 1e-5 of transformers', interpreted and
  compiled;
- 40 greedy tokens identical to transformers' (compiled, through
  models.Generator, the program `pdg generate` runs);
- weights exported by pdg.models.save reload in transformers with the same
  logits (from the loaded model and from a bare DecoderConfig).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pdg.runtime
import pytest
from pdg import models, programs
from pdg.interpreter import interpret
from pdg.lowering.artifact import compile_module
from pdg.models.generate import Generator
from pdg.models.layout import to_hf
from pdg.nn import AttentionPattern

from models import checkpoints
from models.checkpoints import FAMILIES

PROMPT = [0, 56, 76, 73, 225, 71, 83, 302, 298, 273]
STEPS = 40
TOLERANCE = 1e-5


@dataclass
class Case:
    family: str
    checkpoint: object
    model: models.Model
    greedy: list[int]  # transformers' 40 greedy tokens after PROMPT


@pytest.fixture(scope="module", params=FAMILIES)
def case(request, hf_checkpoints) -> Case:
    ck = hf_checkpoints[request.param]
    model = models.load(ck.directory)
    return Case(request.param, ck, model, checkpoints.greedy(ck.reference, PROMPT, STEPS))


def _max_error(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got - want).max())


def test_01_the_config_and_weights_are_read(case):
    c = case.model.config
    expected = {
        "gpt2": dict(positions="learned", norm="layernorm", gated_mlp=False, tie_embeddings=True),
        "llama": dict(positions="rotary", n_kv_heads=2, tie_embeddings=False),
        "mistral": dict(layer_patterns=(AttentionPattern("window", 5),) * 2),
        "qwen2": dict(
            qkv_bias=True,
            o_bias=False,
            rope_theta=5000.0,
            layer_patterns=(AttentionPattern(), AttentionPattern("window", 4)),
        ),
        "qwen3": dict(qk_norm=True, head_dim=16, qkv_bias=False),
    }[case.family]
    for field, value in expected.items():
        assert getattr(c, field) == value, field
    if case.family == "llama":
        assert c.rope_scaling.kind == "llama3" and c.rope_scaling.original_max_positions == 32
    assert case.model.eos == (checkpoints.EOS,)
    # Every tensor of the checkpoint, from pdg's weights, equals transformers'.
    layout = "gpt2" if case.family == "gpt2" else "llama"
    ours = to_hf(case.model.weights, c, layout)
    theirs = {k: v.numpy() for k, v in case.checkpoint.reference.state_dict().items()}
    if c.tie_embeddings:
        theirs.pop("lm_head.weight")
    assert sorted(ours) == sorted(theirs)
    for name, value in theirs.items():
        np.testing.assert_array_equal(ours[name], value, err_msg=name)
    assert all(w.dtype == np.float32 for w in case.model.weights.values())


def test_02_interpreted_logits_match_transformers(case):
    n = 12  # past the Mistral and Qwen2 windows
    ids = (PROMPT + case.greedy)[:n]
    decode = programs.build_decode(case.model.config, eos=None, max_len=n, prompt_width=n)
    inputs = decode.inputs(case.model.weights, [ids])
    got = interpret(decode.program.build(), inputs, symbols={"B": 1}).outputs["logits"][0]
    want = checkpoints.logits(case.checkpoint.reference, ids)
    assert _max_error(got, want) < TOLERANCE


def test_03_compiled_greedy_tokens_and_logits_match_transformers(case, artifact_cache, tmp_path):
    # The program `pdg generate --ignore-eos` runs (found in the cache later).
    generator = Generator(case.model, ignore_eos=True, cache=artifact_cache)
    (completion,) = generator.generate([PROMPT], STEPS)
    assert completion.token_ids == case.greedy
    assert completion.finish_reason == "length"
    # Logits at every position of prompt + completion, compiled.
    ids = PROMPT + case.greedy
    decode = programs.build_decode(
        case.model.config, eos=None, max_len=len(ids), prompt_width=len(ids)
    )
    compile_module(decode.program.build(), tmp_path / "logits.pdgx", gpu=False)
    run = pdg.runtime.load(tmp_path / "logits.pdgx")
    out = run.run(decode.inputs(case.model.weights, [ids]), {"B": 1}).outputs
    want = checkpoints.logits(case.checkpoint.reference, ids)
    assert _max_error(out["logits"][0], want) < TOLERANCE
    # Teacher forcing through the prompt, its own choices after it.
    np.testing.assert_array_equal(out["tokens"][0][len(PROMPT) - 1 : -1], case.greedy)


def test_04_exported_weights_reload_in_transformers(case, tmp_path):
    want = checkpoints.logits(case.checkpoint.reference, PROMPT + case.greedy[:8])
    shard = 20_000 if case.family == "llama" else None  # one export is sharded
    saved = models.save(
        tmp_path / "from_model", case.model.weights, case.model, max_shard_bytes=shard
    )
    fresh = models.save(tmp_path / "from_config", case.model.weights, case.model.config)
    for directory in (saved, fresh):
        back = checkpoints.reference(directory)
        assert _max_error(checkpoints.logits(back, PROMPT + case.greedy[:8]), want) < 1e-6
        again = models.load(directory)
        assert again.config == case.model.config
        for path, value in case.model.weights.items():
            np.testing.assert_array_equal(again.weights[path], value, err_msg=path)
    assert (saved / "tokenizer.json").is_file() and (saved / "generation_config.json").is_file()
    if shard:
        assert (saved / "model.safetensors.index.json").is_file()
