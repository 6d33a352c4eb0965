"""RLOOConfig: the training arguments of rl.RLOOTrainer, by TRL's names
(see trl_config.py for the rules). TRL's RLOOTrainer has GRPO's shape
(reward functions, num_generations completions per prompt); what differs
is the advantage (leave-one-out), the KL (a penalty in the reward) and
the loss (on each completion's summed log-probs), see
programs.build_grpo with losses.RLOOAlgorithm."""

from __future__ import annotations

from dataclasses import dataclass

from .trl_config import GRPOConfig


@dataclass
class RLOOConfig(GRPOConfig):
    num_generations: int = 2
    # KL coefficient: beta * (the completion's summed log-ratio to the
    # reference) is taken off its reward.
    beta: float = 0.05
    normalize_advantages: bool = False

    def _check_loss_options(self) -> None:
        # RLOO has no loss_type or scale_rewards: GRPOConfig's fields of
        # those names must keep their defaults.
        for name, default in (("loss_type", "dapo"), ("scale_rewards", "group")):
            self._need(
                getattr(self, name) == default,
                f"{name} is not an RLOOConfig option",
                "RLOO's loss is on each completion's summed log-probs, its advantage "
                "the leave-one-out baseline's",
            )
        self._need(
            not self.normalize_advantages,
            "normalize_advantages=True is not supported yet",
            "pdg's RLOO uses the leave-one-out advantages as they are (TRL's default)",
        )
