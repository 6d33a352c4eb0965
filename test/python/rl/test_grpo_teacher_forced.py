"""GRPO's reference scored teacher-forced (build_grpo's
teacher_forced_reference, nn.teacher_forced): once over all the steps of
the finished completions, not a step at a time beside the policy.

The same program both ways, in float64 through the interpreter: the
reference log-probs, the loss, the KL and every gradient agree to 1e-9,
for GPT-2's layout (learned positions, biases, a shared prefill of prompts
of different lengths) and Llama's (rotary positions, grouped-query heads,
RMSNorm, a gated MLP, an untied head) and Qwen3's q/k norms. Compiled in
float32, the teacher-forced program agrees with the interpreter to 1e-5.
The graph no longer runs the reference inside the generation loop."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("torch")  # test_grpo_program's helpers import it

import pdg.frontend as pf  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.nn import AttentionPattern, DecoderConfig, GPTConfig  # noqa: E402
from pdg.programs import build_grpo  # noqa: E402

from .test_grpo_program import GRPO, NEW, TOK, WIDTH, parity_reward, prompts  # noqa: E402

MICROBATCH = 2  # two prompts of different lengths per point: 8 rows


def gpt(dtype: str) -> DecoderConfig:
    return GPTConfig(TOK.vocab, 8, 2, 2, None, WIDTH + NEW, dtype=dtype)


def llama(dtype: str, qk_norm: bool = False) -> DecoderConfig:
    return DecoderConfig(
        vocab=TOK.vocab, d_model=8, n_layers=2, n_heads=4, n_kv_heads=2, dtype=dtype,
        positions="rotary", norm="rmsnorm", activation="silu", gated_mlp=True,
        qkv_bias=False, o_bias=False, mlp_bias=False, qk_norm=qk_norm, tie_embeddings=False,
        max_positions=WIDTH + NEW,
    )  # fmt: skip


def assert_same_tokens(a, b) -> None:
    """The sampled tokens: ragged (a completion's length per point)."""
    a, b = np.asarray(a, dtype=object).ravel(), np.asarray(b, dtype=object).ravel()
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def grpo(config: DecoderConfig, teacher_forced: bool = True, **options):
    """The task's GRPO program (no optimizer: the gradients are outputs)."""
    options.setdefault("microbatch", MICROBATCH)
    return build_grpo(
        config, GRPO, parity_reward, eos=TOK.eos, prompt_width=WIDTH, max_new_tokens=NEW,
        teacher_forced_reference=teacher_forced, **options,
    )  # fmt: skip


def run(config: DecoderConfig, teacher_forced: bool, compiled_into=None):
    program = grpo(config, teacher_forced)
    policy = program.policy.init_weights(seed=1, scale=0.5)
    reference = program.policy.init_weights(seed=2, scale=0.5)
    batch = prompts(1, 2 * MICROBATCH, seed=4, cut=True)
    inputs = program.inputs(policy, reference, batch, seed=9)
    symbols = program.symbols(inputs)
    if compiled_into is None:
        return interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    compile_module(program.program.build(), compiled_into, gpu=False)
    return load(compiled_into).run(inputs, symbols, udfs=program.udfs).outputs


@pytest.mark.parametrize(
    "config",
    [gpt("f64"), llama("f64"), llama("f64", qk_norm=True)],
    ids=["gpt2", "llama", "qwen3"],
)
def test_the_teacher_forced_reference_gives_the_stepwise_program(config):
    stepwise = run(config, teacher_forced=False)
    forced = run(config, teacher_forced=True)
    grads = sorted(k for k in stepwise if k.startswith("g_"))
    assert len(grads) > 10
    assert_same_tokens(forced["tokens"], stepwise["tokens"])
    # A reference unlike the policy: the KL is far from 0, so a wrong
    # reference log-prob moves it.
    assert stepwise["kl"] > 1e-3
    for key in ["loss", "kl", *grads]:
        np.testing.assert_allclose(forced[key], stepwise[key], rtol=1e-9, atol=1e-9, err_msg=key)


def test_compiled_teacher_forced_reference_matches_the_interpreter(tmp_path):
    want = run(gpt("f32"), teacher_forced=True)
    got = run(gpt("f32"), teacher_forced=True, compiled_into=tmp_path / "grpo.pdgx")
    assert_same_tokens(got["tokens"], want["tokens"])
    for key in ["loss", "kl", *(k for k in want if k.startswith("g_"))]:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-5, err_msg=key)


def test_the_reference_leaves_the_generation_loop():
    """Stepwise, the reference's projections are values over the step dim
    t; teacher-forced, none is: they run once, over the whole of t."""

    def reference_values_over_t(teacher_forced: bool) -> list[str]:
        text = str(grpo(gpt("f32"), teacher_forced).program.build())
        return [line for line in text.splitlines() if "ref_h0_attn" in line and "[p, t]" in line]

    assert reference_values_over_t(False)
    assert not reference_values_over_t(True)


def test_unsupported_references_are_refused_with_a_hint():
    window = replace(gpt("f32"), pattern=AttentionPattern("window", 2))
    with pytest.raises(pf.ProgramError, match="teacher_forced_reference: a layer attends"):
        grpo(window)
    with pytest.raises(pf.ProgramError, match="needs the group layout"):
        grpo(gpt("f32"), layout="completion", microbatch=1)
