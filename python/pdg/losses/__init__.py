"""Reinforcement-learning fine-tuning losses as frontend operators.

    from pdg import losses

    adv = losses.group_advantages(rewards, group_dim)    # (r - mean) / (std + eps)
    loss = losses.grpo_token_loss(logp, old_logp, ref_logp, adv, clip=0.2, beta=0.04)

They build ordinary nodes, so the whole algorithm (generation, rewards,
log-probs, loss, gradients, the optimizer) is one program the compiler
optimizes together. The programs (pdg.programs) use them; the trainers that
compile and run those programs are pdg.rl's.
"""

from .dpo import DPOAlgorithm, dpo_pair_loss
from .grpo import (
    GRPOAlgorithm,
    group_advantages,
    grpo_token_loss,
    masked_sequence_mean,
    row_advantages,
)
from .ppo import PPOConfig, gae, ppo_token_loss
from .rloo import (
    RLOOAlgorithm,
    leave_one_out_advantages,
    rloo_sequence_loss,
    rloo_token_loss,
    row_leave_one_out_advantages,
)

__all__ = [
    "DPOAlgorithm",
    "GRPOAlgorithm",
    "PPOConfig",
    "RLOOAlgorithm",
    "dpo_pair_loss",
    "gae",
    "group_advantages",
    "grpo_token_loss",
    "leave_one_out_advantages",
    "masked_sequence_mean",
    "ppo_token_loss",
    "rloo_sequence_loss",
    "rloo_token_loss",
    "row_advantages",
    "row_leave_one_out_advantages",
]
