"""GRPO's reference, and the policy's log-probs for the loss, scored
teacher-forced (build_grpo's teacher_forced_reference and
teacher_forced_policy, nn.teacher_forced): once over all the steps of the
finished completions, not a step at a time beside the sampling.

The same program each way, in float64 through the interpreter: the
tokens, the loss, the KL and every gradient agree to 1e-9, for GPT-2's
layout (learned positions, biases, a shared prefill of prompts of
different lengths) and Llama's (rotary positions, grouped-query heads,
RMSNorm, a gated MLP, an untied head) and Qwen3's q/k norms, and for
RLOO's loss and GRPO's other loss types. Compiled in float32, the
teacher-forced programs agree with the interpreter to 1e-5. The graph no
longer runs the reference inside the generation loop, nor, with the
policy teacher-forced, the policy's backward."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("torch")  # test_grpo_program's helpers import it

import pdg.frontend as pf  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg import optim  # noqa: E402
from pdg.losses import RLOOAlgorithm  # noqa: E402
from pdg.nn import AttentionPattern, DecoderConfig, GPTConfig, LoraSpec  # noqa: E402
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


def grpo(config: DecoderConfig, teacher_forced: bool = True, algorithm=GRPO, **options):
    """The task's GRPO program (no optimizer: the gradients are outputs)."""
    options.setdefault("microbatch", MICROBATCH)
    return build_grpo(
        config, algorithm, parity_reward, eos=TOK.eos, prompt_width=WIDTH, max_new_tokens=NEW,
        teacher_forced_reference=teacher_forced, **options,
    )  # fmt: skip


def run(config: DecoderConfig, teacher_forced: bool, compiled_into=None, **options):
    program = grpo(config, teacher_forced, **options)
    policy = program.policy.init_weights(seed=1, scale=0.5)
    reference = program.policy.init_weights(seed=2, scale=0.5)
    batch = prompts(1, 2 * MICROBATCH, seed=4, cut=True)
    inputs = program.inputs(policy, reference, batch, seed=9)
    symbols = program.symbols(inputs)
    if compiled_into is None:
        module = program.program.build()
        return interpret(module, inputs, symbols=symbols, udfs=program.udfs).outputs
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


@pytest.mark.parametrize(
    "config",
    [gpt("f64"), llama("f64"), llama("f64", qk_norm=True)],
    ids=["gpt2", "llama", "qwen3"],
)
def test_the_teacher_forced_policy_gives_the_stepwise_program(config):
    """The loss's log-probs teacher-forced, the reference both ways: the
    same loss and gradients as the program that replays the steps."""
    stepwise = run(config, teacher_forced=False)
    grads = sorted(k for k in stepwise if k.startswith("g_"))
    for reference_forced in (False, True):
        forced = run(config, teacher_forced=reference_forced, teacher_forced_policy=True)
        assert_same_tokens(forced["tokens"], stepwise["tokens"])
        for key in ["loss", "kl", *grads]:
            np.testing.assert_allclose(
                forced[key], stepwise[key], rtol=1e-9, atol=1e-9, err_msg=key
            )


@pytest.mark.parametrize(
    "options",
    [
        {"algorithm": RLOOAlgorithm(group=GRPO.group, beta=0.1)},
        {"loss_type": "dapo"},
        {"loss_type": "dr_grpo"},
        {"share_prefill": False},
    ],
    ids=["rloo", "dapo", "dr_grpo", "unshared"],
)
def test_the_teacher_forced_policy_keeps_every_loss(options):
    stepwise = run(gpt("f64"), teacher_forced=False, **options)
    forced = run(gpt("f64"), teacher_forced=False, teacher_forced_policy=True, **options)
    grads = sorted(k for k in stepwise if k.startswith("g_"))
    assert max(np.abs(stepwise[k]).max() for k in grads) > 1e-6  # the loss has a gradient
    for key in ["loss", "kl", *grads]:
        np.testing.assert_allclose(forced[key], stepwise[key], rtol=1e-9, atol=1e-9, err_msg=key)


@pytest.mark.parametrize("policy", [False, True], ids=["reference", "policy"])
def test_compiled_teacher_forced_programs_match_the_interpreter(tmp_path, policy):
    want = run(gpt("f32"), teacher_forced=True, teacher_forced_policy=policy)
    got = run(
        gpt("f32"), teacher_forced=True, compiled_into=tmp_path / "grpo.pdgx",
        teacher_forced_policy=policy,
    )  # fmt: skip
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


def test_the_policy_backward_leaves_the_generation_loop():
    """Stepwise, a policy weight is read over the step dim t by its forward
    product and, transposed, by the backward's (the input's gradient);
    with the policy teacher-forced, by the forward alone, which samples.
    Over the shared prefill's dim s, stepwise, each model's weights are
    read a position at a time; teacher-forced, never (the prefill runs
    over all its positions at once)."""

    def readers(weight: str, dim: str, **options) -> int:
        program = grpo(gpt("f32"), **options)
        lines = str(program.program.build()).splitlines()
        names = {weight}  # and its transposes
        names |= {
            line.split("=")[0].strip()
            for line in lines
            if '= pdg.node "permute' in line and f"{weight}[]" in line
        }
        return sum(
            f"[p, {dim}] (" in line and any(f"{name}[]" in line for name in names)
            for line in lines
        )

    stepwise = {"teacher_forced": False}
    forced = {"teacher_forced": True, "teacher_forced_policy": True}
    assert readers("%h0_mlp_fc_w", "t", **stepwise) >= 2
    assert readers("%h0_mlp_fc_w", "t", **forced) == 1
    for weight in ("%h0_mlp_fc_w", "%ref_h0_mlp_fc_w"):
        assert readers(weight, "s", **stepwise) >= 1
        assert readers(weight, "s", **forced) == 0


def test_unsupported_references_are_refused_with_a_hint():
    window = replace(gpt("f32"), pattern=AttentionPattern("window", 2))
    with pytest.raises(pf.ProgramError, match="teacher_forced_reference: a layer attends"):
        grpo(window)
    with pytest.raises(pf.ProgramError, match="needs the group layout"):
        grpo(gpt("f32"), layout="completion", microbatch=1)
    with pytest.raises(pf.ProgramError, match="teacher_forced_policy: a layer attends"):
        grpo(window, False, teacher_forced_policy=True, share_prefill=False)
    for options in (
        {"layout": "completion", "microbatch": 1},
        {"lora": LoraSpec(rank=2, alpha=4.0, targets=("h0.attn.q",))},
        {"optimizer": optim.Adam(1e-3), "staleness": 1},
    ):
        with pytest.raises(pf.ProgramError, match="teacher_forced_policy needs the group"):
            grpo(gpt("f32"), False, teacher_forced_policy=True, **options)
