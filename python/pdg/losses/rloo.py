"""RLOO (REINFORCE with a leave-one-out baseline): each completion's
advantage is its reward minus the mean reward of the other completions of
the same prompt, and the loss is REINFORCE's on the completion's log-prob,
with the same KL penalty towards the reference as GRPO's.

    A_g   = r_g - mean_{j != g} r_j = (G r_g - sum_j r_j) / (G - 1)
    token = -A * logp + beta * (exp(ref - logp) - (ref - logp) - 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import Dim, TensorLike

from .grpo import whole_dim


@dataclass(frozen=True)
class RLOOConfig:
    group: int = 4  # completions per prompt (at least 2)
    beta: float = 0.04  # KL coefficient
    temperature: float = 1.0


def leave_one_out_advantages(rewards: TensorLike, group: Dim) -> TensorLike:
    if group.kind != "static" or group.static_size < 2:
        raise ProgramError("the group dim needs a static size of at least 2")
    n = group.static_size
    total = whole_dim(rewards, group).sum()
    return (rewards * float(n) - total) * (1.0 / (n - 1))


def rloo_token_loss(
    logp: TensorLike, ref_logp: TensorLike, advantage: TensorLike, beta: float
) -> TensorLike:
    if beta < 0:
        raise ProgramError(f"beta must be >= 0, got {beta}")
    loss = -(advantage * logp)
    if beta:
        delta = ref_logp - logp
        loss = loss + (ops.exp(delta) - delta - 1.0) * beta
    return loss
