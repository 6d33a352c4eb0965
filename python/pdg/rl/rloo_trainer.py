"""RLOOTrainer with TRL's interface: GRPOTrainer's shape (reward
functions, num_generations completions of each prompt, one update per
batch), compiling programs.build_grpo with losses.RLOOAlgorithm: TRL's
RLOO, whose advantage is each completion's reward less the mean of the
other completions of its prompt, with the KL to the reference a penalty
in the reward (beta times the completion's summed log-ratio) and the loss
on each completion's summed log-probs.

    from pdg.rl import RLOOConfig, RLOOTrainer        # was: from trl import ...

    trainer = RLOOTrainer(model="path/to/model", reward_funcs=[correct],
                          train_dataset=dataset, args=RLOOConfig(output_dir="out"))
    trainer.train()
"""

from __future__ import annotations

import numpy as np

from .errors import TrainerConfigError
from .grpo_trainer import GRPOTrainer
from .rloo_config import RLOOConfig


class RLOOTrainer(GRPOTrainer):
    def __init__(self, model, reward_funcs, args: RLOOConfig | None = None, **kwargs):
        """The arguments are GRPOTrainer's (TRL's RLOOTrainer's), `args` an
        RLOOConfig."""
        if args is not None and not isinstance(args, RLOOConfig):
            raise TrainerConfigError(
                f"RLOOTrainer: args must be an RLOOConfig, got {type(args).__name__}"
            )
        super().__init__(model, reward_funcs, args or RLOOConfig(), **kwargs)

    def _algorithm(self):
        from pdg.losses import RLOOAlgorithm

        a = self.args
        algorithm = RLOOAlgorithm(group=a.num_generations, beta=a.beta, temperature=a.temperature)
        return algorithm, "grpo"  # RLOO has no loss_type: its own loss

    def _metrics(self, step: int, samples, computed: dict, seconds: float) -> dict:
        """GRPO's metrics where TRL's RLOO logs the same, and RLOO's own:
        reward_std is the std of the batch's rewards; frac_reward_zero_std
        (TRL's: of the rewards less the KL penalty) only where beta is 0."""
        out = super()._metrics(step, samples, computed, seconds)
        rewards = np.array([s.reward for s in samples])
        out["reward_std"] = float(rewards.std(ddof=1)) if rewards.size > 1 else 0.0
        if self.args.beta:
            out.pop("frac_reward_zero_std")
        return out
