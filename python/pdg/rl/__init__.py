"""Reinforcement-learning fine-tuning losses as frontend operators.

    adv = rl.group_advantages(rewards, group_dim)          # (r - mean) / (std + eps)
    loss = rl.grpo_token_loss(logp, old_logp, ref_logp, adv, clip=0.2, beta=0.04)

They build ordinary nodes, so the whole algorithm (generation, rewards,
log-probs, loss, gradients, the optimizer) is one program the compiler
optimizes together.
"""

from .grpo import GRPOConfig, group_advantages, grpo_token_loss, masked_sequence_mean

__all__ = ["GRPOConfig", "group_advantages", "grpo_token_loss", "masked_sequence_mean"]
