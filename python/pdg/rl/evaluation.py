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

import tempfile
from pathlib import Path

import numpy as np

from .data import PromptData
from .errors import TrainerConfigError
from .metrics import sample_metrics
from .rewards import RewardFunctions
from .run_log import RunLog

EVAL_SEED = 500_009  # added to seed * 1_000_003; training's calls add their step


class Evaluator:
    def __init__(self, trainer, dataset, reward_funcs):
        a = trainer.args
        self.args = a
        self.data = PromptData(dataset, trainer.tokenizer, shuffle=False, seed=a.seed)
        self.rewards = RewardFunctions(
            reward_funcs, a.reward_weights, self.data, trainer.tokenizer, trainer.eos
        )
        self.prompts_per_call = a.per_device_eval_batch_size // a.num_generations

    def build(self, trainer, algorithm, cache: Path) -> None:
        from pdg.frontend.errors import ProgramError, SourceLoc, fixed_location
        from pdg.lowering.cache import build_artifact
        from pdg.programs import build_grpo
        from pdg.runtime import load

        a = self.args
        try:
            with fixed_location(SourceLoc("pdg.rl.GRPOTrainer", 0)):
                self.program = build_grpo(
                    trainer.config,
                    algorithm,
                    self.rewards,
                    eos=trainer.eos,
                    prompt_width=self.data.prompt_width,
                    max_new_tokens=a.max_completion_length,
                    microbatch=1,
                    loss_type=a.loss_type,
                    keyed_reward=True,
                    lora=trainer.lora,
                    scale_rewards=a.reward_scale,
                    gradients=False,
                )
        except ProgramError as e:
            raise TrainerConfigError(
                f"GRPOTrainer (evaluation): {e.message}",
                e.hint
                or f"the longest eval prompt has {self.data.prompt_width} tokens and "
                f"completions up to max_completion_length={a.max_completion_length}",
            ) from None
        work = Path(tempfile.mkdtemp(prefix="pdg-grpo-eval-"))
        built = build_artifact(self.program.program, "grpo_eval", work, cache)
        RunLog.message(
            "pdg: evaluation program "
            + ("loaded from the cache" if built.cached else f"compiled in {built.seconds:.1f} s")
        )
        self.run_program = load(built.path)

    def evaluate(self, weights, reference, step: int) -> tuple[dict, list]:
        """TRL's metrics over the eval dataset (without the "eval_"
        prefix) and the samples, for the policy `weights`."""
        from pdg.runtime.cpu import UdfError

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
            try:
                out = self.run_program.run(
                    inputs, self.program.symbols(inputs), udfs=self.program.udfs
                ).outputs
            except UdfError as e:
                if isinstance(e.__cause__, TrainerConfigError):
                    raise e.__cause__ from None
                raise
            samples += self.rewards.take(step)
            # The batch's loss and KL, weighted by its prompts.
            loss += float(np.asarray(out["loss"])) * len(batch)
            kl += float(np.asarray(out["kl"])) * len(batch)
            weight += len(batch)
        metrics = {"loss": loss / weight, **sample_metrics(samples, self.rewards.names)}
        metrics["kl"] = kl / weight
        return metrics, samples
