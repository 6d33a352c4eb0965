"""One RL fine-tuning update on given samples, as a program: the policy's
and the frozen reference model's log-probs of each completion token
(teacher forcing), the algorithm's loss (GRPO, RLOO or DPO, pdg.losses), and
either the loss's gradient with respect to every policy weight or, with an
optimizer, the updated weights (one update per iteration).

Dims: p (prompt, given at launch), [i (iteration, given at launch), when
training,] g (completion of that prompt, static: the group; DPO's pair) and
t (position in prompt + completion, static). Inputs: `tokens[p, .., g, t]`
the sequence, `targets` the next token at each position, `mask` 1.0 where
that target is a completion token; GRPO also reads `old_logp` (the
sampling policy's log-prob of each target) and `rewards[p, .., g]`, RLOO
`rewards`; DPO's g = 0 is the chosen completion, g = 1 the rejected (it
also outputs each completion's summed log-probs, `logps` and `ref_logps`,
over [p, .., g]). With an optimizer, `grad_norm` is the gradients' global
norm before clipping, per iteration. PPO
reads `old_logp`, `old_values` (the critic's at the rollout) and
`token_rewards` (per token, KL penalty included) and trains a critic (a
GPT with a value head, weights `critic.*`) with the policy; its advantages
come from GAE, a recurrence that runs backward over t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pdg.frontend as pf
from pdg import autodiff, losses, optim
from pdg.nn import GPT, DecoderConfig

from .sequences import check_positions


@dataclass
class RLStepProgram:
    program: pf.Program
    policy: GPT
    reference: GPT | None  # not for PPO
    paths: list[str]  # the trained weights (PPO: the critic's too), as output `g_<path>`
    training: optim.Training | None = None  # with an optimizer
    critic: GPT | None = None  # PPO's (its value head: inputs critic_value_w, critic_value_b)


def build_rl_step(
    config: DecoderConfig,
    length: int,
    algorithm: losses.GRPOAlgorithm | losses.RLOOAlgorithm | losses.DPOAlgorithm,
    optimizer: optim.Optimizer | None = None,
    clip_norm: float | None = None,
    reference_logp: bool = False,
) -> RLStepProgram:
    """With `reference_logp`, the reference's log-probs are the input
    `ref_logp[p, .., g, t]` (computed during generation, see build_decode's
    `reference`) instead of a reference model run here."""
    name = {
        losses.GRPOAlgorithm: "grpo",
        losses.RLOOAlgorithm: "rloo",
        losses.DPOAlgorithm: "dpo",
        losses.PPOConfig: "ppo",
    }.get(type(algorithm))
    if name is None:
        raise pf.ProgramError(f"unknown algorithm {type(algorithm).__name__}")
    check_positions(config, length, "the sequence length")
    prog = pf.Program(f"{name}_step")
    # p first: pdg-vectorize folds a leading dim (one step over all prompts).
    p = prog.dim("p", launch="P")
    i = prog.dim("i", launch="I") if optimizer is not None else None
    g = prog.dim("g", algorithm.group)
    t = prog.dim("t", length)
    over = [i] if i is not None else []
    real = config.dtype
    tokens = prog.input("tokens", (), "i64", domain=[p, *over, g, t])
    targets = prog.input("targets", (), "i64", domain=[p, *over, g, t])
    mask = prog.input("mask", (), real, domain=[p, *over, g, t])
    # The reference's weights are fixed: program inputs (PPO's KL penalty is
    # in its per-token rewards already).
    reference = GPT(prog, config, path="ref") if name != "ppo" and not reference_logp else None
    if i is not None:
        prog.iterate_parameters(i)  # the trained weights change per iteration
    policy = GPT(prog, config)
    position = prog.coordinate(t)

    def logp(model: GPT) -> pf.TensorLike:
        logits = model(tokens, position, t)
        if algorithm.temperature != 1.0:
            logits = logits * (1.0 / algorithm.temperature)
        return pf.take(pf.log_softmax(logits), targets)

    policy_logp = logp(policy)
    ref_logp = logp(reference) if reference is not None else None
    if reference_logp and name != "ppo":
        ref_logp = prog.input("ref_logp", (), real, domain=[p, *over, g, t])
    params = policy.parameters()
    critic = None
    if name == "ppo":
        critic, critic_params, value = critic_values(prog, config, tokens, position, t)
        params = {**params, **critic_params}
        old_logp = prog.input("old_logp", (), real, domain=[p, *over, g, t])
        old_value = prog.input("old_values", (), real, domain=[p, *over, g, t])
        rewards = prog.input("token_rewards", (), real, domain=[p, *over, g, t])
        advantage = losses.gae(rewards, old_value, mask, t, algorithm.gamma, algorithm.lam)
        returns = advantage + old_value
        per_token = losses.ppo_token_loss(
            policy_logp, old_logp, advantage, value, old_value, returns, algorithm
        )
        batch = [slice(0, p.size), *over, slice(0, algorithm.group), slice(0, length)]
        total = (per_token * mask)[tuple(batch)].sum()
        loss = (total / pf.maximum(mask[tuple(batch)].sum(), 1.0)).named("loss")
    elif name == "dpo":
        seq = losses.grpo.whole_dim(policy_logp * mask, t).sum().named("logps")
        seq_ref = losses.grpo.whole_dim(ref_logp * mask, t).sum().named("ref_logps")
        per_prompt = losses.dpo_pair_loss(
            seq,
            seq_ref,
            g,
            algorithm.beta,
            algorithm.loss_type,
            algorithm.label_smoothing,
            tokens=losses.grpo.whole_dim(mask, t).sum(),
        ).named("pair_loss")
        loss = per_prompt[tuple([slice(0, p.size), *over])].mean().named("loss")
        # Each completion's summed log-probs, the policy's (at the weights
        # before the update) and the reference's: TRL's DPO metrics.
        prog.output("logps", seq)
        prog.output("ref_logps", seq_ref)
    else:
        rewards = prog.input("rewards", (), real, domain=[p, *over, g])
        if name == "grpo":
            old_logp = prog.input("old_logp", (), real, domain=[p, *over, g, t])
            advantage = losses.group_advantages(rewards, g, algorithm.eps).named("advantage")
            per_token = losses.grpo_token_loss(
                policy_logp, old_logp, ref_logp, advantage, algorithm.clip, algorithm.beta
            )
            per_sequence = losses.masked_sequence_mean(per_token, mask, t)
        else:  # rloo: REINFORCE on the sequence's log-prob (summed)
            advantage = losses.leave_one_out_advantages(rewards, g).named("advantage")
            per_token = losses.rloo_token_loss(policy_logp, ref_logp, advantage, algorithm.beta)
            per_sequence = losses.grpo.whole_dim(per_token * mask, t).sum()
        per_sequence = per_sequence.named("sequence_loss")
        batch = [slice(0, p.size), *over, slice(0, algorithm.group)]
        loss = per_sequence[tuple(batch)].mean().named("loss")
    prog.output("loss", loss)
    if optimizer is not None:
        training = optim.minimize(loss, params, optimizer, clip_norm)
        prog.output("grad_norm", training.grad_norm)  # before clipping
        training.add_outputs()
        return RLStepProgram(prog, policy, reference, list(params), training, critic)
    for path, grad in zip(params, autodiff.grad(loss, list(params.values())), strict=True):
        prog.output("g_" + path.replace(".", "_"), grad)
    return RLStepProgram(prog, policy, reference, list(params), None, critic)


def critic_values(prog: pf.Program, config: DecoderConfig, tokens, position, t):
    """PPO's critic: a GPT (weights `critic.*`) whose last hidden state at
    each position, through a linear value head (`critic_value.w`, `.b`;
    inputs critic_value_w, critic_value_b), is the value there. Returns
    (the GPT, every critic parameter by path, the values)."""
    critic = GPT(prog, config, path="critic")
    head_w = prog.parameter("critic_value_w", (config.d_model,), config.dtype)
    head_b = prog.parameter("critic_value_b", (), config.dtype)
    value = ((critic.hidden(tokens, position, t) * head_w).sum() + head_b).named("value")
    params = {**critic.parameters(), "critic_value.w": head_w, "critic_value.b": head_b}
    return critic, params, value


@dataclass
class ValuesProgram:
    """The critic's value at every position of given sequences (PPO's
    values at the rollout): `tokens[p, g, t]` in, `value[p, g, t]` out."""

    program: pf.Program
    critic: GPT

    def inputs(self, weights: dict, tokens: np.ndarray) -> dict[str, np.ndarray]:
        """`weights` by path (the critic's `critic.*` and `critic_value.*`;
        others are ignored)."""
        inputs = self.critic.inputs_from(weights)
        inputs["critic_value_w"] = np.asarray(weights["critic_value.w"])
        inputs["critic_value_b"] = np.asarray(weights["critic_value.b"])
        inputs["tokens"] = tokens
        return inputs


def build_values(config: DecoderConfig, length: int, group: int) -> ValuesProgram:
    prog = pf.Program("values")
    p = prog.dim("p", launch="P")
    g = prog.dim("g", group)
    t = prog.dim("t", length)
    tokens = prog.input("tokens", (), "i64", domain=[p, g, t])
    critic, _, value = critic_values(prog, config, tokens, prog.coordinate(t), t)
    prog.output("value", value)
    return ValuesProgram(prog, critic)
