"""LoRA in the GRPO program (build_grpo(lora=...)): only the adapters
train, the reference is the base model, and the base weights are inputs
with no gradient, per-iteration copy or optimizer state.

The gradients are checked against the full model's by the chain rule: a
LoRA model computes the full model with w' = w + s * a @ b, so its
adapters' gradients are s * dL/dw' @ b.T and s * a.T @ dL/dw', where
dL/dw' is the gradient the plain program computes at the merged weights
(float64, interpreter, the same samples)."""

from __future__ import annotations

import numpy as np
import pytest
from pdg import losses, nn, optim, rl
from pdg.frontend import Program, ProgramError
from pdg.interpreter import interpret
from pdg.nn import GPTConfig, LoraSpec
from pdg.nn.lora import init_adapters, merge
from pdg.programs import build_grpo

TASK = rl.Addition(10)
TOK = TASK.tokenizer
WIDTH, NEW = TASK.prompt_width, 3
GRPO = losses.GRPOAlgorithm(group=4, clip=0.2, beta=0.04)
SPEC = LoraSpec(rank=2, alpha=4.0, targets=("h0.attn.q", "h0.attn.v", "h0.mlp.proj"))


def parity_reward(prompt_ids, completion_ids) -> float:
    return float(completion_ids[0] % 2)


def build(dtype: str, lora=None, optimizer=None):
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW, dtype=dtype)
    return build_grpo(
        config,
        GRPO,
        parity_reward,
        eos=TOK.eos,
        prompt_width=WIDTH,
        max_new_tokens=NEW,
        optimizer=optimizer,
        microbatch=2,
        lora=lora,
    )


def prompts(iterations: int, count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [[TOK.encode(p) for p, _ in TASK.problems(rng, count)] for _ in range(iterations)]


def adapters(base, dtype, nonzero: bool):
    """Starting adapters; `nonzero`: lora_b random too, so that the
    adapters change the model and both gradients are informative."""
    out = init_adapters(SPEC, base, seed=3, dtype=dtype)
    if nonzero:
        rng = np.random.default_rng(4)
        for k in out:
            if k.endswith("lora_b"):
                out[k] = (rng.standard_normal(out[k].shape) * 0.3).astype(dtype)
    return out


def test_adapter_gradients_are_the_chain_rule_of_the_full_gradient():
    full, lora = build("f64"), build("f64", SPEC)
    base = full.policy.init_weights(seed=1, scale=0.5)
    weights = {**base, **adapters(base, np.float64, nonzero=True)}
    merged = merge(SPEC, weights)
    batch = [prompts(1, 4)[0]]
    runs = {}
    for name, program, w, ref in (
        ("full", full, merged, base),
        ("lora", lora, weights, None),
    ):
        inputs = program.inputs(w, ref, batch, seed=5)
        runs[name] = interpret(
            program.program.build(), inputs, symbols=program.symbols(inputs), udfs=program.udfs
        ).outputs
    np.testing.assert_array_equal(runs["lora"]["tokens"], runs["full"]["tokens"])
    assert abs(float(runs["lora"]["loss"]) - float(runs["full"]["loss"])) <= 1e-12
    # The reference is the base model: the same KL as the plain program's
    # reference given the base weights, and not zero (the adapters act).
    assert abs(float(runs["lora"]["kl"]) - float(runs["full"]["kl"])) <= 1e-12
    assert float(runs["lora"]["kl"]) > 0
    gradients = {k for k in runs["lora"] if k.startswith("g_")}
    assert gradients == {"g_" + p.replace(".", "_") for p in SPEC.adapter_paths()}
    for target in SPEC.targets:
        g_w = runs["full"]["g_" + f"{target}.w".replace(".", "_")]
        a, b = weights[f"{target}.lora_a"], weights[f"{target}.lora_b"]
        g_a = runs["lora"]["g_" + f"{target}.lora_a".replace(".", "_")]
        g_b = runs["lora"]["g_" + f"{target}.lora_b".replace(".", "_")]
        assert np.abs(g_w).max() > 1e-4  # the check is not vacuous
        np.testing.assert_allclose(g_a, SPEC.scale * g_w @ b.T, rtol=0, atol=1e-10)
        np.testing.assert_allclose(g_b, SPEC.scale * a.T @ g_w, rtol=0, atol=1e-10)


def test_training_updates_only_the_adapters_compiled_as_interpreted(tmp_path):
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    program = build("f32", SPEC, optim.Adam(1e-2))
    base = program.policy.init_weights(seed=1, scale=0.5)
    weights = {**base, **adapters(base, np.float32, nonzero=False)}
    # No optimizer state or starting input beyond the adapters': the base
    # weights are plain inputs, read by the policy and the reference.
    names = set(program.program.input_names)
    slots = ("__exp_avg", "__exp_avg_sq")
    assert {n for n in names if n.endswith(slots)} == {
        p.replace(".", "_") + s for p in SPEC.adapter_paths() for s in slots
    }
    assert not any(n.startswith("ref_") for n in names)
    batches = prompts(3, 4, seed=4)
    inputs = program.inputs(weights, None, batches, seed=9)
    with pytest.raises(ValueError, match="reference is the base model"):
        program.inputs(weights, base, batches, seed=9)
    symbols = program.symbols(inputs)
    want = interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
    compile_module(program.program.build(), tmp_path / "grpo.pdgx", gpu=False)
    got = load(tmp_path / "grpo.pdgx").run(inputs, symbols, udfs=program.udfs).outputs
    np.testing.assert_array_equal(got["reward"], want["reward"])
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-3, atol=1e-5)
    # lora_b starts at zero: the policy is the reference at the first iteration.
    assert float(got["kl"][0]) == 0.0 and float(got["kl"][-1]) > 0
    final, state = program.training.final_state(got)
    assert set(final) == set(SPEC.adapter_paths())
    for path in final:
        np.testing.assert_allclose(
            final[path], program.training.final_state(want)[0][path], atol=1e-3
        )
    assert all(np.abs(final[f"{t}.lora_b"]).max() > 0 for t in SPEC.targets)


def test_lora_targets_must_be_projections():
    with pytest.raises(ProgramError, match="'h0.attn' is not a projection"):
        build("f32", LoraSpec(2, 4.0, ("h0.attn",)), optim.Adam(1e-2))
    with pytest.raises(ProgramError, match="rank must be a positive integer"):
        LoraSpec(0, 4.0, ("h0.attn.q",))


def test_merge_folds_the_adapters_into_the_base():
    config = GPTConfig(TOK.vocab, 8, 1, 2, None, WIDTH + NEW)
    base = nn.GPT(Program("m"), config).init_weights(seed=1)
    weights = {**base, **adapters(base, np.float32, nonzero=True)}
    merged = merge(SPEC, weights)
    assert set(merged) == set(base)
    rng = np.random.default_rng(0)
    for target in SPEC.targets:
        w, a, b = (weights[f"{target}.{leaf}"] for leaf in ("w", "lora_a", "lora_b"))
        x = rng.standard_normal((3, w.shape[0]))
        np.testing.assert_allclose(
            x @ merged[f"{target}.w"], x @ w + SPEC.scale * (x @ a) @ b, rtol=1e-5, atol=1e-6
        )
    untouched = set(base) - {f"{t}.w" for t in SPEC.targets}
    assert all(merged[k] is base[k] for k in untouched)
