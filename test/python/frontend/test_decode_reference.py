"""The decode program, run by the interpreter, against an independent
PyTorch implementation (float64): identical tokens, logits within 1e-6
relative, for full, window and block attention, prompts of different
lengths in one batch, EOS per sequence, greedy and sampled."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pdg.interpreter import interpret  # noqa: E402
from pdg.models.layout import weights_from_state_dict  # noqa: E402
from pdg.nn import AttentionPattern, GPTConfig  # noqa: E402
from pdg.programs import build_decode  # noqa: E402

from .torch_reference import TorchGPT  # noqa: E402

PROMPTS = [[3, 7, 1], [5], [2, 9, 4, 4, 8]]
MAX_LEN = 10
RTOL = 1e-6


def config(pattern: str, kv_heads=None) -> GPTConfig:
    return GPTConfig(
        vocab=24,
        d_model=16,
        n_layers=2,
        n_heads=4,
        n_kv_heads=kv_heads,
        max_positions=MAX_LEN,
        pattern=AttentionPattern.parse(pattern),
        dtype="f64",
    )


def run_both(pattern: str, *, kv_heads=None, seed=None, temperature=1.0):
    cfg = config(pattern, kv_heads)
    probe = build_decode(cfg, eos=-1, max_len=MAX_LEN, prompt_width=5)
    weights = probe.model.init_weights(seed=11, scale=0.6)
    ref = TorchGPT(weights, cfg.n_layers, cfg.n_heads, kv_heads)
    kind, size = cfg.pattern.kind, cfg.pattern.size
    # EOS: the token sequence 0 emits at its third generated step, so that
    # sequence stops early while the others (most likely) run longer.
    free, _ = ref.decode(
        PROMPTS[0],
        0,
        eos=-1,
        max_len=MAX_LEN,
        pattern=kind,
        size=size,
        seed=seed,
        temperature=temperature,
    )
    eos = int(free[len(PROMPTS[0]) - 1 + 2])
    decode = build_decode(
        cfg, eos=eos, max_len=MAX_LEN, prompt_width=5, sample_seed=seed, temperature=temperature
    )
    result = interpret(
        decode.program.build(), decode.inputs(weights, PROMPTS), symbols={"B": len(PROMPTS)}
    )
    expected = [
        ref.decode(
            p,
            b,
            eos=eos,
            max_len=MAX_LEN,
            pattern=kind,
            size=size,
            seed=seed,
            temperature=temperature,
        )
        for b, p in enumerate(PROMPTS)
    ]
    return result, expected


def check(result, expected):
    lengths = np.atleast_1d(result.bounds["T"])
    for b, (tokens, logits) in enumerate(expected):
        got_tokens = np.asarray(result.outputs["tokens"][b])
        got_logits = np.asarray(result.outputs["logits"][b])
        assert lengths[b] == len(tokens)
        np.testing.assert_array_equal(got_tokens, tokens)
        np.testing.assert_allclose(got_logits, logits, rtol=RTOL, atol=RTOL * np.abs(logits).max())
    # The sequences really end at different steps.
    assert len(set(int(n) for n in lengths)) > 1


@pytest.mark.parametrize("pattern", ["full", "window:3", "block:4"])
def test_01_greedy_decode_matches_torch(pattern):
    check(*run_both(pattern))


def test_02_grouped_query_attention_matches_torch():
    check(*run_both("window:4", kv_heads=2))


@pytest.mark.parametrize("pattern", ["full", "block:3"])
def test_03_sampled_decode_matches_torch(pattern):
    check(*run_both(pattern, seed=1234, temperature=0.8))


def test_04_hugging_face_state_dict_loads_into_the_same_inputs():
    cfg = GPTConfig(vocab=24, d_model=16, n_layers=2, n_heads=4, max_positions=MAX_LEN)
    decode = build_decode(cfg, eos=0, max_len=MAX_LEN)
    ours = decode.model.init_weights(seed=3)
    hf = {
        "transformer.wte.weight": torch.tensor(ours["wte.w"]),
        "transformer.wpe.weight": torch.tensor(ours["wpe.w"]),
        "transformer.ln_f.weight": torch.tensor(ours["ln_f.g"]),
        "transformer.ln_f.bias": torch.tensor(ours["ln_f.b"]),
    }
    for i in range(cfg.n_layers):
        p, q = f"h{i}.", f"transformer.h.{i}."
        hf[q + "attn.c_attn.weight"] = torch.tensor(
            np.concatenate([ours[p + f"attn.{n}.w"] for n in "qkv"], axis=1)
        )
        hf[q + "attn.c_attn.bias"] = torch.tensor(
            np.concatenate([ours[p + f"attn.{n}.b"] for n in "qkv"])
        )
        for ours_name, hf_name in [
            ("attn.o.w", "attn.c_proj.weight"),
            ("attn.o.b", "attn.c_proj.bias"),
            ("ln1.g", "ln_1.weight"),
            ("ln1.b", "ln_1.bias"),
            ("ln2.g", "ln_2.weight"),
            ("ln2.b", "ln_2.bias"),
            ("mlp.fc.w", "mlp.c_fc.weight"),
            ("mlp.fc.b", "mlp.c_fc.bias"),
            ("mlp.proj.w", "mlp.c_proj.weight"),
            ("mlp.proj.b", "mlp.c_proj.bias"),
        ]:
            hf[q + hf_name] = torch.tensor(ours[p + ours_name])
    from_hf = weights_from_state_dict(decode.model, hf)
    direct = decode.model.inputs_from(ours)
    assert from_hf.keys() == direct.keys()
    for k in direct:
        np.testing.assert_array_equal(from_hf[k], direct[k])
