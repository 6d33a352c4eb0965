"""GRPOTrainer's evaluation (eval_dataset, eval_strategy="steps"): every
eval_steps steps the policy samples num_generations completions of every
eval prompt, the reward functions score them, and the trainer logs TRL's
metrics of them with "eval_" in front (TensorBoard "eval/<name>", as
transformers writes them): eval_loss, eval_reward, eval_reward_std,
eval_rewards/<f>/mean, eval_kl, eval_completions/*.

The evaluation runs its own compiled program: build_grpo without an
optimizer or gradients (gradients=False), one prompt's group per point, so
it takes any number of prompts; a call holds per_device_eval_batch_size
completions. Its sampling seed is the same at every evaluation, so two
evaluations differ only by the weights. It reads the weights and changes
nothing of the training: its data order and seeds are the training's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .data import PromptData
from .errors import TrainerConfigError
from .grpo_programs import compile_grpo, run_grpo
from .metrics import sample_metrics
from .rewards import RewardFunctions

EVAL_SEED = 500_009  # added to seed * 1_000_003; training's calls add their step


class Evaluator:
    def __init__(self, trainer, dataset, reward_funcs):
        a = trainer.args
        self.args = a
        self.data = PromptData(dataset, trainer.tokenizer, shuffle=False, seed=a.seed)
        if self.data.streamed:
            raise TrainerConfigError(
                "eval_dataset is streamed (an IterableDataset); each evaluation reads all of it",
                "give a datasets.Dataset, e.g. Dataset.from_list(list(stream.take(N)))",
            )
        self.rewards = RewardFunctions(
            reward_funcs, a.reward_weights, self.data, trainer.tokenizer, trainer.eos
        )
        self.prompts_per_call = a.per_device_eval_batch_size // a.num_generations

    def build(self, trainer, algorithm, loss_type, cache: Path) -> None:
        self.program, self.run_program = compile_grpo(
            trainer,
            algorithm,
            loss_type,
            self.rewards,
            self.data,
            "evaluation",
            cache,
            microbatch=1,
            gradients=False,
        )

    def evaluate(self, weights, reference, step: int) -> tuple[dict, list]:
        """TRL's metrics over the eval dataset (without the "eval_"
        prefix) and the samples, for the policy `weights`."""
        a = self.args
        rows = list(range(len(self.data)))
        samples, loss, kl, weight = [], 0.0, 0.0, 0
        for call, start in enumerate(range(0, len(rows), self.prompts_per_call)):
            batch = rows[start : start + self.prompts_per_call]
            keys = self.rewards.plan([step], [batch])
            inputs = self.program.inputs(
                weights,
                reference,
                [[self.data.ids[r] for r in batch]],
                seed=a.seed * 1_000_003 + EVAL_SEED + call,
                keys=keys,
            )
            out = run_grpo(self.program, self.run_program, inputs)
            samples += self.rewards.take(step)
            # The batch's loss and KL, weighted by its prompts.
            loss += float(np.asarray(out["loss"])) * len(batch)
            kl += float(np.asarray(out["kl"])) * len(batch)
            weight += len(batch)
        metrics = {"loss": loss / weight, **sample_metrics(samples, self.rewards.names)}
        metrics["kl"] = kl / weight
        return metrics, samples
