"""The training arguments of rl's TRL-style trainers, by TRL's names.

Where TRL (and the transformers TrainingArguments it extends) has a field
for a concept, a config here has it with the same name, default and
meaning, so a TRL script's GRPOConfig(...) (DPOConfig, RLOOConfig) runs
unchanged. A TRL field pdg does not implement is refused when set to
anything but its default (a clear error, never a silent difference); one
it does not have at all is Python's unexpected-keyword error, naming it.
pdg's own options are the `pdg_*` fields. TrainingArguments holds what
every trainer shares (the optimizer, its schedule, the logs, the
checkpoints); GRPOConfig adds GRPO's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from .errors import TrainerConfigError

REPORT_TO = ("tensorboard", "wandb", "none")
SCHEDULES = ("linear", "constant", "constant_with_warmup")
LOSS_TYPES = ("grpo", "dapo", "bnpo", "dr_grpo")


@dataclass
class TrainingArguments:
    # Where checkpoints, logs and TensorBoard events go.
    output_dir: str = "trainer_output"
    # Optimizer steps; -1: num_train_epochs passes over the dataset.
    max_steps: int = -1
    num_train_epochs: float = 3.0
    per_device_train_batch_size: int = 8
    learning_rate: float = 1e-6  # TRL's default for its trainers
    lr_scheduler_type: str = "linear"
    warmup_steps: int = 0
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    logging_steps: int = 10
    save_steps: int = 500
    report_to: str | list[str] = "none"
    logging_dir: str | None = None  # default: output_dir/runs
    seed: int = 42
    disable_tqdm: bool = False

    # pdg's own options (no TRL counterpart).
    # Optimizer steps run by one call of the compiled program (fewer where
    # a checkpoint or the last step falls inside a call).
    pdg_steps_per_call: int = 10
    # Compiled artifacts are kept here and reused (pdg.lowering.cache);
    # None: $PDG_CACHE or ~/.cache/pdg.
    pdg_cache: str | None = None
    # Weights and the compiled code in float32 ("f32") or float64 ("f64").
    pdg_dtype: str = "f32"

    def __post_init__(self):
        self._check()

    @property
    def rows_per_step(self) -> int:
        """Dataset rows an optimizer step reads."""
        return self.per_device_train_batch_size

    def report_targets(self) -> list[str]:
        """The integrations to log to ("tensorboard", "wandb"), TRL's
        spelling in: a name, a list of names, "all" (tensorboard, and wandb
        where it is installed) or "none"."""
        names = [self.report_to] if isinstance(self.report_to, str) else list(self.report_to)
        if "all" in names:
            import importlib.util

            return ["tensorboard"] + (["wandb"] if importlib.util.find_spec("wandb") else [])
        return [n for n in names if n != "none"]

    def _need(self, ok: bool, message: str, hint: str = "") -> None:
        if not ok:
            raise TrainerConfigError(f"{type(self).__name__}: {message}", hint)

    def _check_integers(self, *names: str) -> None:
        for name in names:
            value = getattr(self, name)
            self._need(
                isinstance(value, int) and not isinstance(value, bool),
                f"{name} must be an integer, got {value!r}",
            )

    def _check(self) -> None:
        need = self._need
        self._check_integers("max_steps", "per_device_train_batch_size", "logging_steps")
        self._check_integers("save_steps", "warmup_steps")
        need(self.max_steps == -1 or self.max_steps > 0, "max_steps must be positive (or -1)")
        need(self.per_device_train_batch_size >= 1, "per_device_train_batch_size must be >= 1")
        need(self.logging_steps >= 1 and self.save_steps >= 1, "logging/save_steps must be >= 1")
        need(self.learning_rate > 0, f"learning_rate must be positive, got {self.learning_rate}")
        need(
            self.lr_scheduler_type in SCHEDULES,
            f"lr_scheduler_type '{self.lr_scheduler_type}' is not supported",
            f"use one of {', '.join(SCHEDULES)}",
        )
        need(self.warmup_steps >= 0, "warmup_steps must be >= 0")
        unknown = [n for n in self.report_targets() if n not in REPORT_TO]
        need(
            not unknown,
            f"report_to {unknown} is not supported",
            "use 'tensorboard', 'wandb' or 'none' (a JSONL log is always written)",
        )
        need(self.pdg_steps_per_call >= 1, "pdg_steps_per_call must be at least 1")
        need(self.pdg_dtype in ("f32", "f64"), "pdg_dtype must be 'f32' or 'f64'")

    def learning_rate_at(self, step: int, total_steps: int) -> float:
        """The learning rate of optimizer step `step` (from 0) of
        `total_steps`, as transformers' schedulers give it."""
        return self.learning_rate * self._factor(step, float, max, min, total_steps)

    def optimizer_schedule(self, total_steps: int):
        """The schedule as a function of the program's step tensor."""
        from pdg.frontend import ops

        def rate(step):
            return self._factor(step, None, ops.maximum, ops.minimum, total_steps) * (
                self.learning_rate
            )

        return rate

    def optimizer(self, total_steps: int):
        """transformers' default optimizer (AdamW) with this config's
        schedule and hyperparameters, as a pdg.optim optimizer."""
        from pdg import optim

        return optim.AdamW(
            self.optimizer_schedule(total_steps),
            betas=(self.adam_beta1, self.adam_beta2),
            eps=self.adam_epsilon,
            weight_decay=self.weight_decay,
        )

    def _factor(self, step, cast, maximum, minimum, total):
        # transformers' schedules: a linear warmup from 0 over warmup_steps
        # ("constant" has none), then linear decay to 0 at the last step, or
        # constant.
        warm = self.warmup_steps if self.lr_scheduler_type != "constant" else 0
        ramp = step * (1.0 / warm) if warm else None
        if self.lr_scheduler_type == "linear":
            decay = (step * -1.0 + total) * (1.0 / max(total - warm, 1))
            value = maximum(minimum(ramp, decay) if ramp is not None else decay, 0.0)
        else:
            value = minimum(ramp, 1.0) if ramp is not None else step * 0.0 + 1.0
        return cast(value) if cast else value

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


@dataclass
class GRPOConfig(TrainingArguments):
    # Completions per optimizer step (prompts: this / num_generations).
    per_device_train_batch_size: int = 8
    num_generations: int = 8
    max_completion_length: int = 512
    temperature: float = 1.0
    # KL coefficient towards the reference (the starting model); TRL's
    # default 0.0 still computes the KL here, for the logs.
    beta: float = 0.0
    epsilon: float = 0.2  # the surrogate's clip range
    loss_type: str = "dapo"
    # The advantages' divisor: the group's reward std ("group" or True), the
    # batch's ("batch"), or none ("none" or False, as Dr. GRPO advises).
    scale_rewards: str | bool = "group"
    reward_weights: list[float] | None = None
    log_completions: bool = False  # a table of samples every logging_steps
    num_completions_to_print: int | None = None
    shuffle_dataset: bool = True
    # Evaluation on eval_dataset: "no", or every eval_steps steps ("steps";
    # eval_steps None: logging_steps, as transformers); a batch counts
    # completions, as the training batch.
    eval_strategy: str = "no"
    eval_steps: int | None = None
    per_device_eval_batch_size: int = 8
    eval_on_start: bool = False

    # pdg's own options (no TRL counterpart).
    # Prompts whose completions step together as the rows of one point
    # (programs.build_grpo's microbatch); None: the largest divisor of the
    # prompts per step up to 4.
    pdg_microbatch: int | None = None
    # The longest prompt (tokens) of a streamed dataset (an IterableDataset,
    # whose prompts are not known when the program compiles); None: what
    # the model's context leaves after max_completion_length.
    pdg_prompt_width: int | None = None

    @property
    def prompts_per_step(self) -> int:
        return self.per_device_train_batch_size // self.num_generations

    @property
    def reward_scale(self) -> str:
        """scale_rewards as one of "group", "batch", "none"."""
        if isinstance(self.scale_rewards, bool):
            return "group" if self.scale_rewards else "none"
        return self.scale_rewards

    @property
    def evaluation_interval(self) -> int | None:
        """Steps between evaluations (None: no evaluation)."""
        if self.eval_strategy == "no":
            return None
        return self.eval_steps or self.logging_steps

    @property
    def rows_per_step(self) -> int:
        return self.prompts_per_step

    def _check(self) -> None:
        super()._check()
        need = self._need
        self._check_integers("num_generations", "max_completion_length")
        need(self.num_generations >= 2, "num_generations must be at least 2 (GRPO's groups)")
        need(
            self.per_device_train_batch_size >= self.num_generations
            and self.per_device_train_batch_size % self.num_generations == 0,
            f"per_device_train_batch_size ({self.per_device_train_batch_size}) counts "
            f"completions: it must be a multiple of num_generations ({self.num_generations})",
        )
        need(self.max_completion_length >= 1, "max_completion_length must be at least 1")
        need(0 < self.epsilon < 1, f"epsilon must be in (0, 1), got {self.epsilon}")
        need(self.beta >= 0, f"beta must be >= 0, got {self.beta}")
        need(self.temperature > 0, f"temperature must be positive, got {self.temperature}")
        self._check_loss_options()
        need(
            self.eval_strategy in ("no", "steps"),
            f"eval_strategy '{self.eval_strategy}' is not supported",
            "use 'steps' (every eval_steps steps) or 'no'",
        )
        need(
            self.eval_steps is None or (isinstance(self.eval_steps, int) and self.eval_steps > 0),
            f"eval_steps must be a positive integer, got {self.eval_steps!r}",
        )
        need(
            self.per_device_eval_batch_size >= self.num_generations
            and self.per_device_eval_batch_size % self.num_generations == 0,
            f"per_device_eval_batch_size ({self.per_device_eval_batch_size}) counts "
            f"completions: a multiple of num_generations ({self.num_generations})",
        )
        if self.pdg_microbatch is not None:
            need(
                self.prompts_per_step % self.pdg_microbatch == 0,
                f"pdg_microbatch ({self.pdg_microbatch}) must divide the prompts per step "
                f"({self.prompts_per_step})",
            )
        if self.pdg_prompt_width is not None:
            self._check_integers("pdg_prompt_width")
            need(self.pdg_prompt_width >= 1, "pdg_prompt_width must be at least 1")

    def _check_loss_options(self) -> None:
        need = self._need
        need(
            self.loss_type in LOSS_TYPES,
            f"loss_type '{self.loss_type}' is not supported",
            f"use one of {', '.join(LOSS_TYPES)}",
        )
        need(
            self.scale_rewards in ("group", "batch", "none", True, False),
            f"scale_rewards={self.scale_rewards!r} is not one of TRL's",
            "use 'group' (True), 'batch' or 'none' (False)",
        )


def steps_of(config: TrainingArguments, rows: int | None) -> int:
    """The optimizer steps of a run: max_steps, or num_train_epochs passes
    over `rows` dataset rows (None: a stream, whose length is unknown)."""
    if config.max_steps > 0:
        return config.max_steps
    if rows is None:
        raise TrainerConfigError(
            f"{type(config).__name__}: a streamed train_dataset (an IterableDataset) has no "
            "length, so num_train_epochs cannot say how many steps to run",
            "set max_steps",
        )
    return max(1, math.ceil(config.num_train_epochs * rows / config.rows_per_step))
