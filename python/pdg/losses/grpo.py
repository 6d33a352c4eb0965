"""GRPO (group relative policy optimization): rewards normalized within the
group of completions of one prompt, a PPO-style clipped surrogate on each
completion token, and a KL penalty towards a reference model.

    A_g       = (r_g - mean(r)) / (std(r) + eps)           std: unbiased, over the group
    ratio     = exp(logp - old_logp)
    surrogate = min(ratio * A, clip(ratio, 1 - clip, 1 + clip) * A)
    kl        = exp(ref - logp) - (ref - logp) - 1         (the k3 estimator)
    token     = -surrogate + beta * kl
    loss      = mean over completions of (sum of token over its tokens / its length)
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.adjoint_ops import over_domain
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import Dim, TensorLike


@dataclass(frozen=True)
class GRPOAlgorithm:
    group: int = 8  # completions per prompt
    clip: float = 0.2  # the surrogate's clip range (epsilon)
    beta: float = 0.04  # KL coefficient
    eps: float = 1e-4  # added to the group's reward std
    temperature: float = 1.0


def group_advantages(
    rewards: TensorLike, group: Dim, eps: float = 1e-4, scale: str | TensorLike = "group"
) -> TensorLike:
    """(r - mean(r)) / (std(r) + eps) over `group`, the dim of the
    completions of one prompt (std with Bessel's correction, as torch.std).
    `scale`: "group" (that std), "none" (r - mean(r), Dr. GRPO), or a
    value to divide by instead (the batch's std: batch_std())."""
    if rewards.shape:
        raise ProgramError("group_advantages() needs one scalar reward per completion")
    if group.kind != "static" or group.static_size < 2:
        raise ProgramError("the group dim needs a static size of at least 2")
    if not any(d.name == group.name for d in rewards.domain):
        raise ProgramError(f"the rewards are not defined over the group dim '{group.name}'")
    return _standardized(rewards, whole_dim(rewards, group), eps, scale)


def row_advantages(
    rewards: TensorLike, group: int, eps: float = 1e-4, scale: str | TensorLike = "group"
) -> TensorLike:
    """group_advantages() for groups held in one point: rewards (M * G,),
    the rows of a microbatch, rows [m * G, (m + 1) * G) the completions of
    its prompt m (`group` = G)."""
    shape = rewards.shape
    if len(shape) != 1 or shape[0] is None or group < 2 or shape[0] % group:
        raise ProgramError(
            f"row_advantages() needs a static vector of groups of {group} rewards, got {shape}",
            hint="a group holds at least 2 completions",
        )
    groups = rewards.reshape(shape[0] // group, group)
    return _standardized(groups, groups, eps, scale).reshape(shape[0])


def batch_std(rewards: TensorLike) -> TensorLike:
    """The std of every element of `rewards` (e.g. a step's whole batch of
    rewards, sliced over the prompts' dim), with Bessel's correction."""
    mean = rewards.mean()
    deviation = rewards - mean
    count = (deviation * 0.0 + 1.0).sum()
    return ops.sqrt((deviation * deviation).sum() / ops.maximum(count - 1.0, 1.0))


SCALES = ("group", "batch", "none")


def _standardized(
    rewards: TensorLike, group: TensorLike, eps: float, scale: str | TensorLike
) -> TensorLike:
    """(rewards - mean(group)) / (std(group) + eps) along the last axis of
    `group`: (G,) the rewards of one group, or (M, G) of M groups, one per
    row (std with Bessel's correction); see group_advantages' `scale`."""
    keep = group.ndim > 1  # several groups: each row's own statistics
    mean = group.mean(axis=-1, keepdims=keep)
    deviation = group - mean
    if isinstance(scale, str) and scale == "none":
        return rewards - mean
    if isinstance(scale, str):
        if scale != "group":
            raise ProgramError(
                f"unknown advantage scale '{scale}'",
                hint="use 'group', 'none', or the value to divide by (batch_std())",
            )
        size = group.shape[-1]
        var = (deviation * deviation).sum(axis=-1, keepdims=keep) * (1.0 / (size - 1))
        scale = ops.sqrt(var)
    return (rewards - mean) / (scale + eps)


def grpo_token_loss(
    logp: TensorLike,
    old_logp: TensorLike,
    ref_logp: TensorLike,
    advantage: TensorLike,
    clip: float = 0.2,
    beta: float = 0.04,
) -> TensorLike:
    """The per-token GRPO loss: the negated clipped surrogate plus beta times
    the KL estimate towards the reference."""
    if not 0 < clip < 1:
        raise ProgramError(f"clip must be in (0, 1), got {clip}")
    if beta < 0:
        raise ProgramError(f"beta must be >= 0, got {beta}")
    ratio = ops.exp(logp - old_logp)
    clipped = ops.minimum(ops.maximum(ratio, 1.0 - clip), 1.0 + clip)
    surrogate = ops.minimum(ratio * advantage, clipped * advantage)
    loss = -surrogate
    if beta:
        delta = ref_logp - logp
        loss = loss + (ops.exp(delta) - delta - 1.0) * beta
    return loss


def masked_sequence_mean(values: TensorLike, mask: TensorLike, step: Dim) -> TensorLike:
    """Per sequence: the sum of values where mask is 1, over `step`, divided
    by the number of such steps (at least 1). The mask is counted over each
    sequence of `values` (when `step` is dynamic, each ends at its own T)."""
    total = whole_dim(values * mask, step).sum(axis=0)
    count = whole_dim(over_domain(mask, values.domain), step).sum(axis=0)
    return total / ops.maximum(count, 1.0)


def whole_dim(x: TensorLike, dim: Dim) -> TensorLike:
    """x read along all of `dim` (a leading axis per point), at the current
    point of its other dims."""
    if not any(d.name == dim.name for d in x.domain):
        raise ProgramError(f"the value is not defined over '{dim.name}'")
    key = tuple(slice(0, d.size) if d.name == dim.name else d for d in x.domain)
    return x[key]
