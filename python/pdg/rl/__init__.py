"""Reinforcement-learning fine-tuning with compiled programs: the trainers,
a synthetic task and a progress display.

    from pdg import rl
    from pdg.losses import GRPOConfig

    trainer = rl.GRPOTrainer(config, GRPOConfig(group=8), task.reward, tokenizer,
                             prompt_width=6, max_new_tokens=3)

The trainers compile pdg.programs (whose losses are pdg.losses') and run
them; this package sits above both, and nothing below imports it.
"""

from .arith import Addition, CharTokenizer
from .progress import ProgressBar

__all__ = [
    "Addition",
    "CharTokenizer",
    "DPOTrainer",
    "GRPOProgramTrainer",
    "GRPOTrainer",
    "PPOTrainer",
    "ProgressBar",
]


def __getattr__(name):
    # The trainers compile programs: import them (and MLIR) only when used.
    if name == "GRPOTrainer":
        from .trainer import GRPOTrainer

        return GRPOTrainer
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
