"""PPO with a critic: per-token advantages by generalized advantage
estimation (GAE) from the rollout's rewards and values, then a clipped
policy surrogate and a clipped value loss, averaged over the batch's
completion tokens.

    delta_t = r_t + gamma V_{t+1} - V_t            (V after the completion: 0)
    A_t     = delta_t + gamma lambda A_{t+1}        (a recurrence run backward in t)
    R_t     = A_t + V_t
    policy  = -min(ratio A, clip(ratio, 1 - clip, 1 + clip) A)
    value   = 0.5 max((v - R)^2, (V + clip(v - V, -value_clip, value_clip) - R)^2)
    token   = policy + vf_coef * value
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import Dim, TensorLike


@dataclass(frozen=True)
class PPOConfig:
    group: int = 1  # completions per prompt
    clip: float = 0.2
    value_clip: float = 0.2
    vf_coef: float = 0.1
    gamma: float = 1.0
    lam: float = 0.95
    temperature: float = 1.0


def gae(rewards: TensorLike, values: TensorLike, mask: TensorLike, step: Dim, gamma, lam):
    """Advantages per token (zero where mask is 0), from per-token rewards
    and the rollout's values, all over a domain ending in `step`."""
    if step.kind != "static":
        raise ProgramError("gae() needs a static step dim (the completion's positions)")
    last = step.static_size - 1
    program = rewards.program
    domain = program.ordered_dims(
        {d.name for d in rewards.domain} | {d.name for d in values.domain}
    )
    nxt = values[step + 1] * mask[step + 1]
    delta = program.recurrent((), rewards.dtype, domain, name="td_error")
    delta[step == last] = rewards - values
    delta[step < last] = rewards + nxt * gamma - values
    adv = program.recurrent((), rewards.dtype, domain, name="gae")
    adv[step == last] = delta * mask
    adv[step < last] = (delta + adv[step + 1] * (gamma * lam)) * mask
    return adv


def ppo_token_loss(logp, old_logp, advantage, value, old_value, returns, cfg: PPOConfig):
    if not 0 < cfg.clip < 1:
        raise ProgramError(f"clip must be in (0, 1), got {cfg.clip}")
    ratio = ops.exp(logp - old_logp)
    clipped = ops.minimum(ops.maximum(ratio, 1.0 - cfg.clip), 1.0 + cfg.clip)
    policy = -ops.minimum(ratio * advantage, clipped * advantage)
    moved = ops.minimum(ops.maximum(value - old_value, -cfg.value_clip), cfg.value_clip)
    far = (value - returns) * (value - returns)
    near = (old_value + moved - returns) * (old_value + moved - returns)
    return policy + ops.maximum(far, near) * (0.5 * cfg.vf_coef)
