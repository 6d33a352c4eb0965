"""Reinforcement-learning fine-tuning with compiled programs: TRL's interface
(GRPOTrainer(model=..., reward_funcs=..., train_dataset=..., args=GRPOConfig(...)),
see grpo_trainer.py; RLOOTrainer and DPOTrainer alike), the trainers of the
programs, a synthetic task and a progress display. The losses they compile are pdg.losses'.

    from pdg.rl import GRPOConfig, GRPOTrainer

    trainer = GRPOTrainer(model="./Qwen2.5-0.5B", reward_funcs=[reward],
                          train_dataset=dataset, args=GRPOConfig(output_dir="out"))
    trainer.train()

The trainers compile pdg.programs (whose losses are pdg.losses') and run
them; this package sits above both, and nothing below imports it.
"""

from .arith import Addition, CharTokenizer
from .dpo_config import DPOConfig
from .errors import TrainerConfigError
from .progress import ProgressBar
from .rloo_config import RLOOConfig
from .trl_config import GRPOConfig

__all__ = [
    "Addition",
    "CharTokenizer",
    "DPOConfig",
    "DPOTrainer",
    "GRPOConfig",
    "GRPOProgramTrainer",
    "GRPOTrainer",
    "LoraConfig",
    "PPOTrainer",
    "PairwiseDPOTrainer",
    "ProgressBar",
    "RLOOConfig",
    "RLOOTrainer",
    "SampledGRPOTrainer",
    "TrainerConfigError",
]


def __getattr__(name):
    # The trainers compile programs: import them (and MLIR) only when used.
    if name == "GRPOTrainer":
        from .grpo_trainer import GRPOTrainer

        return GRPOTrainer
    if name == "LoraConfig":
        from pdg.models.lora import LoraConfig

        return LoraConfig
    if name == "SampledGRPOTrainer":
        from .trainer import SampledGRPOTrainer

        return SampledGRPOTrainer
    if name == "DPOTrainer":
        from .dpo_trainer import DPOTrainer

        return DPOTrainer
    if name == "PairwiseDPOTrainer":
        from .pairwise_dpo_trainer import PairwiseDPOTrainer

        return PairwiseDPOTrainer
    if name == "RLOOTrainer":
        from .rloo_trainer import RLOOTrainer

        return RLOOTrainer
    if name == "PPOTrainer":
        from .ppo_trainer import PPOTrainer

        return PPOTrainer
    if name == "GRPOProgramTrainer":
        from .program_trainer import GRPOProgramTrainer

        return GRPOProgramTrainer
    raise AttributeError(name)
