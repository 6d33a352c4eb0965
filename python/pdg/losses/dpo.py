"""DPO (direct preference optimization): for a pair of completions of one
prompt, the chosen (pair index 0) and the rejected (1), with sequence
log-probs summed over their completion tokens under the policy and the
frozen reference, and delta = (logp_c - ref_c) - (logp_r - ref_r):

    sigmoid: -log(sigmoid(beta * delta)) = log(1 + exp(-beta * delta))
    hinge:   max(0, 1 - beta * delta)
    ipo:     (delta_per_token - 1 / (2 beta))^2, each log-ratio divided by
             its completion's token count first
    robust:  ((1 - e) * softplus(-beta * delta) - e * softplus(beta * delta))
             / (1 - 2 e), e = label_smoothing (the chance a label is flipped)

as TRL's DPOTrainer defines its loss types of the same names.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import Dim, TensorLike

from .grpo import whole_dim

LOSS_TYPES = ("sigmoid", "hinge", "ipo", "robust")


@dataclass(frozen=True)
class DPOAlgorithm:
    beta: float = 0.1
    group: int = 2  # the pair: chosen, rejected
    temperature: float = 1.0
    loss_type: str = "sigmoid"  # see LOSS_TYPES
    label_smoothing: float = 0.0  # "robust" only, in [0, 0.5)


def dpo_pair_loss(
    seq_logp: TensorLike,
    seq_ref: TensorLike,
    pair: Dim,
    beta: float,
    loss_type: str = "sigmoid",
    label_smoothing: float = 0.0,
    tokens: TensorLike | None = None,
):
    """The loss of each pair, from per-completion sequence log-probs;
    `tokens`: each completion's token count (the "ipo" loss needs it)."""
    if pair.kind != "static" or pair.static_size != 2:
        raise ProgramError("DPO's pair dim must have static size 2 (chosen, rejected)")
    if beta <= 0:
        raise ProgramError(f"beta must be > 0, got {beta}")
    if loss_type not in LOSS_TYPES:
        raise ProgramError(
            f"unknown DPO loss_type '{loss_type}'", hint=f"use one of {', '.join(LOSS_TYPES)}"
        )
    if not 0.0 <= label_smoothing < 0.5:
        raise ProgramError(f"label_smoothing must be in [0, 0.5), got {label_smoothing}")
    ratio = seq_logp - seq_ref
    if loss_type == "ipo":
        if tokens is None:
            raise ProgramError("the ipo loss needs each completion's token count")
        ratio = ratio / ops.maximum(tokens, 1.0)
    gain = whole_dim(ratio, pair)  # (2,) per pair
    sign = seq_logp.program.constant_array([1.0, -1.0], seq_logp.dtype)
    delta = (gain * sign).sum()
    if loss_type == "ipo":
        off = delta - 1.0 / (2.0 * beta)
        return off * off
    margin = delta * beta
    if loss_type == "hinge":
        return ops.maximum(-margin + 1.0, 0.0)
    loss = _softplus(-margin)
    if loss_type == "robust" and label_smoothing:
        e = label_smoothing
        loss = (loss * (1.0 - e) - _softplus(margin) * e) * (1.0 / (1.0 - 2.0 * e))
    return loss


def _softplus(x: TensorLike) -> TensorLike:
    # log(1 + exp(x)): exact at 0, where DPO starts (policy = reference).
    return ops.log1p(ops.exp(x))
