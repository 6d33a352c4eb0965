"""RLOO (REINFORCE with a leave-one-out baseline): each completion's
advantage is its reward minus the mean reward of the other completions of
the same prompt, and the loss is REINFORCE's on the completion's log-prob,
with the same KL penalty towards the reference as GRPO's.

    A_g   = r_g - mean_{j != g} r_j = (G r_g - sum_j r_j) / (G - 1)
    token = -A * logp + beta * (exp(ref - logp) - (ref - logp) - 1)

(rloo_token_loss, what programs.build_rl_step compiles). TRL's RLOOTrainer,
which programs.build_grpo compiles given an RLOOAlgorithm, differs: the KL
is a penalty in the reward (r - beta * sum_t (logp - ref) over the
completion, the sampling policy's log-probs, no gradient), the baseline is
taken on those rewards, and the loss is on each completion's summed
log-probs S (rloo_sequence_loss):

    loss_g = -A_g * exp(S_g - stop_gradient(S_g))   (its value -A_g; its gradient -A_g dS_g)
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import Dim, TensorLike

from .grpo import whole_dim


@dataclass(frozen=True)
class RLOOAlgorithm:
    group: int = 4  # completions per prompt (at least 2)
    beta: float = 0.04  # KL coefficient (a penalty in the loss, or in the reward: see above)
    temperature: float = 1.0


def leave_one_out_advantages(rewards: TensorLike, group: Dim) -> TensorLike:
    if group.kind != "static" or group.static_size < 2:
        raise ProgramError("the group dim needs a static size of at least 2")
    n = group.static_size
    total = whole_dim(rewards, group).sum()
    return (rewards * float(n) - total) * (1.0 / (n - 1))


def row_leave_one_out_advantages(rewards: TensorLike, group: int) -> TensorLike:
    """leave_one_out_advantages() for groups held in one point: rewards (M
    * G,), rows [m * G, (m + 1) * G) the completions of prompt m."""
    shape = rewards.shape
    if len(shape) != 1 or shape[0] is None or group < 2 or shape[0] % group:
        raise ProgramError(
            f"row_leave_one_out_advantages() needs a static vector of groups of {group} "
            f"rewards, got {shape}",
            hint="a group holds at least 2 completions",
        )
    groups = rewards.reshape(shape[0] // group, group)
    total = groups.sum(axis=-1, keepdims=True)
    return ((groups * float(group) - total) * (1.0 / (group - 1))).reshape(shape[0])


def rloo_sequence_loss(seq_logp: TensorLike, advantage: TensorLike) -> TensorLike:
    """TRL's RLOO loss of each completion, from its summed log-probs (one
    update per batch: the ratio to the sampling policy is 1)."""
    return -(advantage * ops.exp(seq_logp - ops.stop_gradient(seq_logp)))


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
