"""Reinforcement-learning fine-tuning: TRL's interface
(GRPOTrainer(model=..., reward_funcs=..., train_dataset=..., args=GRPOConfig(...)),
see grpo_trainer.py) and the losses as frontend operators.

    adv = rl.group_advantages(rewards, group_dim)          # (r - mean) / (std + eps)
    loss = rl.grpo_token_loss(logp, old_logp, ref_logp, adv, clip=0.2, beta=0.04)

They build ordinary nodes, so the whole algorithm (generation, rewards,
log-probs, loss, gradients, the optimizer) is one program the compiler
optimizes together.
"""

from .arith import Addition, CharTokenizer
from .dpo import DPOConfig, dpo_pair_loss
from .errors import TrainerConfigError
from .grpo import (
    GRPOAlgorithm,
    group_advantages,
    grpo_token_loss,
    masked_sequence_mean,
    row_advantages,
)
from .ppo import PPOConfig, gae, ppo_token_loss
from .progress import ProgressBar
from .rloo import RLOOConfig, leave_one_out_advantages, rloo_token_loss
from .trl_config import GRPOConfig

__all__ = [
    "Addition",
    "CharTokenizer",
    "DPOConfig",
    "DPOTrainer",
    "GRPOAlgorithm",
    "GRPOConfig",
    "GRPOProgramTrainer",
    "GRPOTrainer",
    "PPOConfig",
    "PPOTrainer",
    "ProgressBar",
    "RLOOConfig",
    "SampledGRPOTrainer",
    "TrainerConfigError",
    "dpo_pair_loss",
    "gae",
    "group_advantages",
    "grpo_token_loss",
    "leave_one_out_advantages",
    "masked_sequence_mean",
    "ppo_token_loss",
    "rloo_token_loss",
    "row_advantages",
]


def __getattr__(name):
    # The trainers compile programs: import them (and MLIR) only when used.
    if name == "GRPOTrainer":
        from .grpo_trainer import GRPOTrainer

        return GRPOTrainer
    if name == "SampledGRPOTrainer":
        from .trainer import SampledGRPOTrainer

        return SampledGRPOTrainer
    if name == "DPOTrainer":
        from .dpo_trainer import DPOTrainer

        return DPOTrainer
    if name == "PPOTrainer":
        from .ppo_trainer import PPOTrainer

        return PPOTrainer
    if name == "GRPOProgramTrainer":
        from .program_trainer import GRPOProgramTrainer

        return GRPOProgramTrainer
    raise AttributeError(name)
