"""GRPO on given samples, as a program: the policy's and the reference
model's log-probs of each completion token (teacher forcing),
group-normalized advantages, the clipped surrogate with a KL penalty, the
loss and, either its gradient with respect to every policy weight, or with
an optimizer, the updated weights (`iterations` updates, one per batch).

Dims: [i (iteration, given at launch), when training,] p (prompt, given at
launch), g (completion of that prompt, static: the group) and t (position in
prompt + completion, static). `tokens[.., p, g, t]` is the sequence,
`targets` the next token at each position, `mask` 1.0 where that target is
a completion token, `old_logp` the log-prob the sampling policy gave it,
`rewards[.., p, g]` each completion's reward.
"""

from __future__ import annotations

from dataclasses import dataclass

import pdg.frontend as pf
from pdg import optim, rl
from pdg.nn import GPT, GPTConfig


@dataclass
class GRPOStepProgram:
    program: pf.Program
    policy: GPT
    reference: GPT
    paths: list[str]  # the policy's weights, in the order of the gradient outputs
    training: optim.Training | None = None  # with an optimizer


def build_grpo_step(
    config: GPTConfig,
    length: int,
    grpo: rl.GRPOConfig,
    optimizer: optim.Optimizer | None = None,
    clip_norm: float | None = None,
) -> GRPOStepProgram:
    prog = pf.Program("grpo_step")
    i = prog.dim("i", launch="I") if optimizer is not None else None
    p = prog.dim("p", launch="P")
    g = prog.dim("g", grpo.group)
    t = prog.dim("t", length)
    over = [i] if i is not None else []
    tokens = prog.input("tokens", (), "i64", domain=[*over, p, g, t])
    targets = prog.input("targets", (), "i64", domain=[*over, p, g, t])
    mask = prog.input("mask", (), config.dtype, domain=[*over, p, g, t])
    old_logp = prog.input("old_logp", (), config.dtype, domain=[*over, p, g, t])
    rewards = prog.input("rewards", (), config.dtype, domain=[*over, p, g])
    reference = GPT(prog, config, path="ref")  # fixed weights: program inputs
    if i is not None:
        prog.iterate_parameters(i)  # the policy's weights change per iteration
    policy = GPT(prog, config)
    position = prog.coordinate(t)

    def logp(model: GPT) -> pf.TensorLike:
        logits = model(tokens, position, t)
        if grpo.temperature != 1.0:
            logits = logits * (1.0 / grpo.temperature)
        return pf.take(pf.log_softmax(logits), targets)

    advantage = rl.group_advantages(rewards, g, grpo.eps).named("advantage")
    per_token = rl.grpo_token_loss(
        logp(policy), old_logp, logp(reference), advantage, grpo.clip, grpo.beta
    )
    per_sequence = rl.masked_sequence_mean(per_token, mask, t).named("sequence_loss")
    batch = [*over, slice(0, p.size), slice(0, grpo.group)]
    loss = per_sequence[tuple(batch)].mean().named("loss")
    params = policy.parameters()
    prog.output("loss", loss)
    if optimizer is not None:
        training = optim.minimize(loss, params, optimizer, clip_norm)
        training.add_outputs()
        return GRPOStepProgram(prog, policy, reference, list(params), training)
    for path, grad in zip(params, pf.grad(loss, list(params.values())), strict=True):
        prog.output("g_" + path.replace(".", "_"), grad)
    return GRPOStepProgram(prog, policy, reference, list(params))
