"""One step of GRPO, RLOO and DPO (loss and gradients of every policy
weight) on the same samples, against independent PyTorch implementations
written here from each algorithm's definition (GRPO: TRL's
loss_type="grpo" aggregation), float64 through the interpreter and
float32 compiled."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from autodiff.decoder import worst_error  # noqa: E402
from frontend.torch_reference import TorchGPT  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.losses import DPOAlgorithm, GRPOAlgorithm, PPOConfig, RLOOAlgorithm  # noqa: E402
from pdg.nn import GPTConfig  # noqa: E402
from pdg.programs import build_rl_step  # noqa: E402

VOCAB, LENGTH, PROMPTS, GROUP = 12, 8, 2, 4
GRPO = GRPOAlgorithm(group=GROUP, clip=0.2, beta=0.04)
RLOO = RLOOAlgorithm(group=GROUP, beta=0.04)
DPO = DPOAlgorithm(beta=0.5)


def samples(seed: int = 0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, VOCAB, size=(PROMPTS, GROUP, LENGTH))
    targets = np.roll(tokens, -1, axis=2)
    mask = np.zeros((PROMPTS, GROUP, LENGTH))
    for p in range(PROMPTS):
        for g in range(GROUP):
            start, end = 2 + p, int(rng.integers(4, LENGTH))  # completions of different lengths
            mask[p, g, start:end] = 1.0
    rewards = rng.integers(0, 2, size=(PROMPTS, GROUP)).astype(np.float64)
    rewards[:, 0], rewards[:, 1] = 0.0, 1.0  # no group with a zero std
    return tokens, targets, mask, rewards


def torch_logp(weights, tokens, targets, grad: bool, group: int = GROUP):
    model = TorchGPT(weights, 1, 2)
    if grad:
        for w in model.w.values():
            w.requires_grad_(True)
    rows = []
    for p in range(PROMPTS):
        per_group = []
        for g in range(group):
            logits = model.logits(list(tokens[p, g]), "full", 0)
            logp = torch.log_softmax(logits, -1)
            per_group.append(logp.gather(1, torch.tensor(targets[p, g])[:, None])[:, 0])
        rows.append(torch.stack(per_group))
    return torch.stack(rows), model


def torch_grpo_step(policy_w, ref_w, tokens, targets, mask, old_logp, rewards):
    logp, model = torch_logp(policy_w, tokens, targets, grad=True)
    with torch.no_grad():
        ref, _ = torch_logp(ref_w, tokens, targets, grad=False)
    r = torch.tensor(rewards)
    adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + GRPO.eps))[..., None]
    ratio = torch.exp(logp - torch.tensor(old_logp))
    clipped = torch.clamp(ratio, 1 - GRPO.clip, 1 + GRPO.clip)
    per_token = -torch.min(ratio * adv, clipped * adv)
    per_token = per_token + GRPO.beta * (torch.exp(ref - logp) - (ref - logp) - 1)
    m = torch.tensor(mask)
    loss = ((per_token * m).sum(-1) / m.sum(-1).clamp(min=1)).mean()
    loss.backward()
    return float(loss.detach()), {k: w.grad.numpy() for k, w in model.w.items()}


def case(dtype: str):
    """(the step program, its inputs, the PyTorch loss and gradients)."""
    config = GPTConfig(
        vocab=VOCAB, d_model=8, n_layers=1, n_heads=2, max_positions=LENGTH, dtype=dtype
    )
    step = build_rl_step(config, LENGTH, GRPO)
    policy_w = step.policy.init_weights(seed=1, scale=0.5)
    ref_inputs = step.reference.init_weights(seed=2, scale=0.5)  # paths "ref.*"
    ref_w = {k.removeprefix("ref."): v for k, v in ref_inputs.items()}
    tokens, targets, mask, rewards = samples()
    # the sampling policy: the current one, moved far enough that some
    # ratios leave the clip range
    current, _ = torch_logp(policy_w, tokens, targets, grad=False)
    noise = np.random.default_rng(3).normal(scale=0.3, size=current.shape)
    old_logp = current.numpy() + noise
    ratio = np.exp(current.numpy() - old_logp)[mask > 0]
    assert ((ratio < 0.8) | (ratio > 1.2)).any() and ((ratio > 0.8) & (ratio < 1.2)).any()
    real = np.float64 if dtype == "f64" else np.float32
    inputs = {
        **step.policy.inputs_from(policy_w),
        **step.reference.inputs_from(ref_inputs),
        "tokens": tokens,
        "targets": targets,
        "mask": mask.astype(real),
        "old_logp": old_logp.astype(real),
        "rewards": rewards.astype(real),
    }
    expected = torch_grpo_step(policy_w, ref_w, tokens, targets, mask, old_logp, rewards)
    return step, inputs, expected


def test_grpo_step_matches_pytorch():
    step, inputs, (loss, grads) = case("f64")
    result = interpret(step.program.build(), inputs, symbols={"P": PROMPTS})
    assert abs(float(result.outputs["loss"]) - loss) <= 1e-10 * abs(loss)
    assert worst_error(result.outputs, grads, 1e-6) <= 1e-6


def test_grpo_step_compiled_float32(tmp_path):
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    step, inputs, (loss, grads) = case("f32")
    compile_module(step.program.build(), tmp_path / "grpo.pdgx", gpu=False)
    result = load(tmp_path / "grpo.pdgx").run(inputs, symbols={"P": PROMPTS})
    assert abs(float(result.outputs["loss"]) - loss) <= 1e-5 * abs(loss)
    assert worst_error(result.outputs, grads, 1e-3) <= 1e-4


def torch_rloo_step(policy_w, ref_w, tokens, targets, mask, rewards):
    logp, model = torch_logp(policy_w, tokens, targets, grad=True)
    with torch.no_grad():
        ref, _ = torch_logp(ref_w, tokens, targets, grad=False)
    r = torch.tensor(rewards)
    adv = ((GROUP * r - r.sum(1, keepdim=True)) / (GROUP - 1))[..., None]
    per_token = -adv * logp + RLOO.beta * (torch.exp(ref - logp) - (ref - logp) - 1)
    loss = (per_token * torch.tensor(mask)).sum(-1).mean()
    loss.backward()
    return float(loss.detach()), {k: w.grad.numpy() for k, w in model.w.items()}


def torch_dpo_step(policy_w, ref_w, tokens, targets, mask):
    logp, model = torch_logp(policy_w, tokens, targets, grad=True, group=2)
    with torch.no_grad():
        ref, _ = torch_logp(ref_w, tokens, targets, grad=False, group=2)
    m = torch.tensor(mask)
    seq, seq_ref = (logp * m).sum(-1), (ref * m).sum(-1)
    margin = DPO.beta * ((seq[:, 0] - seq_ref[:, 0]) - (seq[:, 1] - seq_ref[:, 1]))
    loss = -torch.nn.functional.logsigmoid(margin).mean()
    loss.backward()
    return float(loss.detach()), {k: w.grad.numpy() for k, w in model.w.items()}


@pytest.mark.parametrize("algorithm", ["rloo", "dpo"])
def test_rloo_and_dpo_steps_match_pytorch(algorithm):
    config = GPTConfig(
        vocab=VOCAB, d_model=8, n_layers=1, n_heads=2, max_positions=LENGTH, dtype="f64"
    )
    algo = RLOO if algorithm == "rloo" else DPO
    step = build_rl_step(config, LENGTH, algo)
    policy_w = step.policy.init_weights(seed=1, scale=0.5)
    ref_inputs = step.reference.init_weights(seed=2, scale=0.5)
    ref_w = {k.removeprefix("ref."): v for k, v in ref_inputs.items()}
    tokens, targets, mask, rewards = samples()
    inputs = {**step.policy.inputs_from(policy_w), **step.reference.inputs_from(ref_inputs)}
    if algorithm == "rloo":
        inputs.update(tokens=tokens, targets=targets, mask=mask, rewards=rewards)
        loss, grads = torch_rloo_step(policy_w, ref_w, tokens, targets, mask, rewards)
    else:  # pairs: the first two completions of each prompt
        tokens, targets, mask = tokens[:, :2], targets[:, :2], mask[:, :2]
        inputs.update(tokens=tokens, targets=targets, mask=mask)
        loss, grads = torch_dpo_step(policy_w, ref_w, tokens, targets, mask)
    result = interpret(step.program.build(), inputs, symbols={"P": PROMPTS})
    assert abs(float(result.outputs["loss"]) - loss) <= 1e-10 * abs(loss)
    assert worst_error(result.outputs, grads, 1e-6) <= 1e-6


PPO = PPOConfig(group=GROUP, clip=0.2, value_clip=0.2, vf_coef=0.5, gamma=0.9, lam=0.8)


def torch_ppo_step(policy_w, critic_w, head, data):
    tokens, targets, mask, old_logp, old_v, r = data
    logp, model = torch_logp(policy_w, tokens, targets, grad=True)
    critic = TorchGPT(critic_w, 1, 2)
    leaves = [*critic.w.values()]
    hw, hb = torch.tensor(head[0], requires_grad=True), torch.tensor(head[1], requires_grad=True)
    for w in leaves:
        w.requires_grad_(True)
    value = torch.stack(
        [
            torch.stack(
                [critic.hidden(list(tokens[p, g]), "full", 0) @ hw + hb for g in range(GROUP)]
            )
            for p in range(PROMPTS)
        ]
    )
    m, ov, rr = torch.tensor(mask), torch.tensor(old_v), torch.tensor(r)
    adv, carry = torch.zeros_like(rr), torch.zeros_like(rr[..., 0])
    for t in reversed(range(LENGTH)):  # generalized advantage estimation
        nxt = ov[..., t + 1] * m[..., t + 1] if t + 1 < LENGTH else 0.0
        delta = rr[..., t] + PPO.gamma * nxt - ov[..., t]
        carry = (delta + PPO.gamma * PPO.lam * carry) * m[..., t]
        adv[..., t] = carry
    returns = adv + ov
    ratio = torch.exp(logp - torch.tensor(old_logp))
    policy = -torch.min(ratio * adv, torch.clamp(ratio, 1 - PPO.clip, 1 + PPO.clip) * adv)
    clipped = ov + torch.clamp(value - ov, -PPO.value_clip, PPO.value_clip)
    vf = 0.5 * torch.max((value - returns) ** 2, (clipped - returns) ** 2)
    loss = ((policy + PPO.vf_coef * vf) * m).sum() / m.sum()
    loss.backward()
    grads = {k: w.grad.numpy() for k, w in model.w.items()}
    grads.update({f"critic.{k}": w.grad.numpy() for k, w in critic.w.items()})
    grads["critic_value.w"], grads["critic_value.b"] = hw.grad.numpy(), hb.grad.numpy()
    return float(loss.detach()), grads


@pytest.mark.parametrize("engine", ["interpreted-f64", "compiled-f32"])
def test_ppo_step_matches_pytorch(engine, tmp_path):
    """PPO with a critic and GAE (a backward recurrence over t: compiled, a
    loop from the last step)."""
    dtype = "f64" if engine == "interpreted-f64" else "f32"
    config = GPTConfig(
        vocab=VOCAB, d_model=8, n_layers=1, n_heads=2, max_positions=LENGTH, dtype=dtype
    )
    step = build_rl_step(config, LENGTH, PPO)
    policy_w = step.policy.init_weights(seed=1, scale=0.5)
    critic_inputs = step.critic.init_weights(seed=4, scale=0.5)
    critic_w = {k.removeprefix("critic."): v for k, v in critic_inputs.items()}
    rng = np.random.default_rng(6)
    head = (rng.normal(size=8), np.float64(rng.normal()))
    tokens, targets, mask, _ = samples()
    current, _ = torch_logp(policy_w, tokens, targets, grad=False)
    old_logp = current.numpy() + rng.normal(scale=0.3, size=current.shape)
    old_values = rng.normal(size=mask.shape)
    token_rewards = rng.normal(size=mask.shape) * mask
    inputs = {
        **step.policy.inputs_from(policy_w),
        **step.critic.inputs_from(critic_inputs),
        "critic_value_w": head[0],
        "critic_value_b": head[1],
        "tokens": tokens,
        "targets": targets,
        "mask": mask,
        "old_logp": old_logp,
        "old_values": old_values,
        "token_rewards": token_rewards,
    }
    data = (tokens, targets, mask, old_logp, old_values, token_rewards)
    loss, grads = torch_ppo_step(policy_w, critic_w, head, data)
    if dtype == "f64":
        result = interpret(step.program.build(), inputs, symbols={"P": PROMPTS})
        assert abs(float(result.outputs["loss"]) - loss) <= 1e-10 * abs(loss)
        assert worst_error(result.outputs, grads, 1e-6) <= 1e-6
        return
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    real = {
        k: np.asarray(v).astype(np.float32) if np.asarray(v).dtype == np.float64 else v
        for k, v in inputs.items()
    }
    compile_module(step.program.build(), tmp_path / "ppo.pdgx", gpu=False)
    result = load(tmp_path / "ppo.pdgx").run(real, symbols={"P": PROMPTS})
    assert abs(float(result.outputs["loss"]) - loss) <= 1e-5 * abs(loss)
    assert worst_error(result.outputs, grads, 1e-3) <= 1e-4
