"""One GRPO step on given samples, as a program: the policy's and the
reference model's log-probs of each completion token (teacher forcing),
group-normalized advantages, the clipped surrogate with a KL penalty, the
loss and its gradient with respect to every policy weight.

Dims: p (prompt, given at launch), g (completion of that prompt, static: the
group) and t (position in prompt + completion, static). `tokens[p, g, t]`
is the sequence, `targets` the next token at each position, `mask` 1.0
where that target is a completion token, `old_logp` the log-prob the
sampling policy gave it, `rewards[p, g]` each completion's reward.
"""

from __future__ import annotations

from dataclasses import dataclass

import pdg.frontend as pf
from pdg import rl
from pdg.nn import GPT, GPTConfig


@dataclass
class GRPOStepProgram:
    program: pf.Program
    policy: GPT
    reference: GPT
    paths: list[str]  # the policy's weights, in the order of the gradient outputs


def build_grpo_step(config: GPTConfig, length: int, grpo: rl.GRPOConfig) -> GRPOStepProgram:
    prog = pf.Program("grpo_step")
    p = prog.dim("p", launch="P")
    g = prog.dim("g", grpo.group)
    t = prog.dim("t", length)
    tokens = prog.input("tokens", (), "i64", domain=[p, g, t])
    targets = prog.input("targets", (), "i64", domain=[p, g, t])
    mask = prog.input("mask", (), config.dtype, domain=[p, g, t])
    old_logp = prog.input("old_logp", (), config.dtype, domain=[p, g, t])
    rewards = prog.input("rewards", (), config.dtype, domain=[p, g])
    policy = GPT(prog, config)
    reference = GPT(prog, config, path="ref")
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
    loss = per_sequence[0 : p.size, 0 : grpo.group].mean().named("loss")
    params = policy.parameters()
    prog.output("loss", loss)
    for path, grad in zip(params, pf.grad(loss, list(params.values())), strict=True):
        prog.output("g_" + path.replace(".", "_"), grad)
    return GRPOStepProgram(prog, policy, reference, list(params))
