"""DPO (direct preference optimization): for a pair of completions of one
prompt, the chosen (pair index 0) and the rejected (1), with sequence
log-probs summed over their completion tokens under the policy and the
frozen reference:

    margin = beta * ((logp_c - ref_c) - (logp_r - ref_r))
    loss   = -log(sigmoid(margin)) = log(1 + exp(-margin))
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import Dim, TensorLike

from .grpo import whole_dim


@dataclass(frozen=True)
class DPOConfig:
    beta: float = 0.1
    group: int = 2  # the pair: chosen, rejected
    temperature: float = 1.0


def dpo_pair_loss(seq_logp: TensorLike, seq_ref: TensorLike, pair: Dim, beta: float):
    """The loss of each pair, from per-completion sequence log-probs."""
    if pair.kind != "static" or pair.static_size != 2:
        raise ProgramError("DPO's pair dim must have static size 2 (chosen, rejected)")
    if beta <= 0:
        raise ProgramError(f"beta must be > 0, got {beta}")
    gain = whole_dim(seq_logp - seq_ref, pair)  # (2,) per pair
    sign = seq_logp.program.constant_array([1.0, -1.0], seq_logp.dtype)
    margin = (gain * sign).sum() * beta
    return ops.log1p(ops.exp(-margin))
