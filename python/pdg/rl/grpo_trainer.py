"""GRPOTrainer with TRL's interface, on pdg's compiled GRPO program.

    from datasets import Dataset
    from pdg.rl import GRPOConfig, GRPOTrainer        # was: from trl import ...

    def correct(prompts, completions, answer, **kwargs):
        return [1.0 if c.strip() == a else 0.0 for c, a in zip(completions, answer)]

    trainer = GRPOTrainer(
        model="path/to/Qwen2.5-0.5B",                 # a Hugging Face directory
        reward_funcs=[correct],
        train_dataset=Dataset.from_list([{"prompt": "2+3=", "answer": "5"}, ...]),
        args=GRPOConfig(output_dir="out", max_steps=100, num_generations=8),
    )
    trainer.train()

Each optimizer step samples num_generations completions of
per_device_train_batch_size / num_generations prompts, scores them with
the reward functions, and updates the policy once (TRL's defaults:
num_iterations=1, so the ratio to the sampling policy is 1 and nothing is
clipped). The whole loop runs in the program programs.build_grpo
compiles: one call runs pdg_steps_per_call steps, Python running only the
reward functions (once per microbatch of completions) and, between calls,
the logs and checkpoints.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .checkpoints import latest_checkpoint, load_checkpoint, save_checkpoint, save_policy
from .data import PromptData
from .errors import TrainerConfigError
from .grpo_programs import compile_grpo, run_grpo
from .metrics import sample_metrics
from .rewards import RewardFunctions
from .run_log import RunLog
from .trl_config import GRPOConfig, steps_of


class TrainOutput(NamedTuple):
    global_step: int
    training_loss: float
    metrics: dict


class GRPOTrainer:
    def __init__(
        self,
        model,
        reward_funcs,
        args: GRPOConfig | None = None,
        train_dataset=None,
        eval_dataset=None,
        processing_class=None,
        reward_processing_classes=None,
        callbacks=None,
        optimizers=(None, None),
        peft_config=None,
    ):
        """`model`: a Hugging Face model directory (read by pdg.models.load),
        a loaded pdg.models.Model, or a pdg model as (DecoderConfig, weights
        by path) with `processing_class` its tokenizer. `reward_funcs`: a
        function or a list (see pdg.rl.rewards). `peft_config`: LoRA (a
        peft.LoraConfig or pdg.rl.LoraConfig): only the adapters train, the
        reference is the base model, and checkpoints and save_model() hold
        the merged model (see pdg.nn.lora)."""
        unsupported = {
            "reward_processing_classes": reward_processing_classes,
            "callbacks": callbacks,
        }
        for name, value in unsupported.items():
            if value is not None:
                raise TrainerConfigError(f"GRPOTrainer: {name} is not supported yet")
        if optimizers != (None, None):
            raise TrainerConfigError(
                "GRPOTrainer: optimizers= is not supported",
                "the optimizer is AdamW, set by GRPOConfig's learning_rate, adam_*, weight_decay",
            )
        if train_dataset is None:
            raise TrainerConfigError("GRPOTrainer needs a train_dataset with a 'prompt' column")
        self.model = _load_model(model, processing_class)
        self.args = args or GRPOConfig(output_dir=f"{self.model.name}-GRPO")
        self.tokenizer = processing_class or self.model.tokenizer
        if self.tokenizer is None:
            raise TrainerConfigError(
                "the model has no tokenizer", "pass processing_class=<a tokenizer>"
            )
        self.config = dataclasses.replace(self.model.config, dtype=self.args.pdg_dtype)
        real = np.float64 if self.args.pdg_dtype == "f64" else np.float32
        self.reference = {k: np.asarray(v, real) for k, v in self.model.weights.items()}
        self.lora = _lora_spec(peft_config, self.model) if peft_config is not None else None
        self.data = PromptData(
            train_dataset,
            self.tokenizer,
            self.args.shuffle_dataset,
            self.args.seed,
            width=_stream_prompt_width(self.args, self.config),
        )
        if self.data.size is not None and self.args.prompts_per_step > self.data.size:
            raise TrainerConfigError(
                f"a step needs {self.args.prompts_per_step} prompts "
                f"(per_device_train_batch_size / num_generations); the dataset has {len(self.data)}"
            )
        self.eos = tuple(self.model.eos) or _stop_ids(self.tokenizer)
        self.rewards = RewardFunctions(
            reward_funcs, self.args.reward_weights, self.data, self.tokenizer, self.eos
        )
        self.total_steps = steps_of(self.args, self.data.size)
        self.evaluator = None
        if eval_dataset is not None and self.args.evaluation_interval:
            from .evaluation import Evaluator

            self.evaluator = Evaluator(self, eval_dataset, reward_funcs)
        elif self.args.evaluation_interval:
            raise TrainerConfigError(
                f"eval_strategy='{self.args.eval_strategy}' needs an eval_dataset",
                "pass eval_dataset=..., or eval_strategy='no'",
            )
        self.weights = dict(self.reference)
        if self.lora is not None:
            from pdg.nn.lora import init_adapters

            # The base is the reference: one copy, which never changes.
            self.weights.update(init_adapters(self.lora, self.reference, self.args.seed, real))
        self.optimizer_state = None
        self.global_step = 0
        # Whether the weights and optimizer state are arrays the last call
        # returned: the next call writes into them (donated) instead of
        # copying them (the model's own weights are also the reference).
        self._state_returned = False
        self._build()

    def _build(self) -> None:
        a = self.args
        algorithm, loss_type = self._algorithm()
        optimizer = a.optimizer(self.total_steps)
        microbatch = a.pdg_microbatch or max(m for m in range(1, 5) if a.prompts_per_step % m == 0)
        cache = Path(a.pdg_cache) if a.pdg_cache else _default_cache()
        RunLog.message(f"pdg: GRPO program: compiled once, then loaded from {cache}...")
        self.program, self.run_program = compile_grpo(
            self,
            algorithm,
            loss_type,
            self.rewards,
            self.data,
            "training",
            cache,
            optimizer=optimizer,
            clip_norm=a.max_grad_norm or None,
            microbatch=microbatch,
        )
        if self.evaluator is not None:
            self.evaluator.build(self, algorithm, loss_type, cache)
        RunLog.message(self._parameter_summary())

    def _parameter_summary(self) -> str:
        """PEFT's count of trainable parameters."""
        total = sum(int(np.size(v)) for v in self.weights.values())
        trained = self.program.training.params
        count = sum(int(np.size(self.weights[p])) for p in trained)
        return (
            f"pdg: trainable params: {count:,} || all params: {total:,} || "
            f"trainable%: {100 * count / total:.4f}"
        )

    def _algorithm(self):
        """(the algorithm build_grpo compiles, its loss_type)."""
        from pdg.losses import GRPOAlgorithm

        a = self.args
        algorithm = GRPOAlgorithm(
            group=a.num_generations, clip=a.epsilon, beta=a.beta, temperature=a.temperature
        )
        return algorithm, a.loss_type

    def train(self, resume_from_checkpoint=None) -> TrainOutput:
        """Trains for the config's steps; `resume_from_checkpoint`: a
        checkpoint directory, or True for output_dir's latest."""
        a = self.args
        if resume_from_checkpoint:
            where = (
                latest_checkpoint(a.output_dir)
                if resume_from_checkpoint is True
                else Path(resume_from_checkpoint)
            )
            real = np.float64 if a.pdg_dtype == "f64" else np.float32
            saved = load_checkpoint(where, real)
            if saved.seed != a.seed:
                raise TrainerConfigError(
                    f"{where} was saved by a run with seed {saved.seed}, this one has {a.seed}",
                    "resume with the same GRPOConfig",
                )
            if saved.lora != _describe_lora(self.lora):
                raise TrainerConfigError(
                    f"{where} was saved with LoRA {saved.lora or 'off'}, this run has "
                    f"{_describe_lora(self.lora) or 'LoRA off'}",
                    "resume with the same peft_config",
                )
            if self.lora is None:
                self.weights = saved.weights
            else:  # the base stays the model's; the adapters are the saved ones
                self.weights = {**self.reference}
                self.weights.update({p: saved.weights[p] for p in self.lora.adapter_paths()})
            self.optimizer_state = saved.optimizer
            self.global_step = saved.step
            self._state_returned = False
        self.rewards.state.max_steps = self.total_steps
        log = RunLog(
            a, self.total_steps, self.global_step, type(self).__name__.removesuffix("Trainer")
        )
        losses = []
        interval = a.evaluation_interval if self.evaluator is not None else None
        try:
            if interval and a.eval_on_start and self.global_step == 0:
                self._evaluate(log)
            while self.global_step < self.total_steps:
                losses += self._call(log)
                if interval and self.global_step % interval == 0:
                    self._evaluate(log)
        finally:
            log.close()
        mean_loss = float(np.mean(losses)) if losses else float("nan")
        return TrainOutput(self.global_step, mean_loss, {"train_loss": mean_loss})

    def _call(self, log: RunLog) -> list[float]:
        """One call of the program: up to pdg_steps_per_call steps, ending
        at the next checkpoint or the last step."""
        a, start = self.args, self.global_step
        count = min(
            a.pdg_steps_per_call, self.total_steps - start, a.save_steps - start % a.save_steps
        )
        if self.evaluator is not None:  # a call ends where an evaluation falls
            count = min(count, a.evaluation_interval - start % a.evaluation_interval)
        steps = list(range(start, start + count))
        rows = self.data.read(steps, a.prompts_per_step)
        keys = self.rewards.plan(steps, rows)
        prompts = [[self.data.ids[r] for r in batch] for batch in rows]
        inputs = self.program.inputs(
            self.weights,
            self.reference if self.lora is None else None,
            prompts,
            seed=a.seed * 1_000_003 + start,
            state=self.optimizer_state,
            start_step=start,
            keys=keys,
        )
        self.rewards.state.global_step = start
        began = time.perf_counter()
        donate = self.run_program.donatable_inputs if self._state_returned else ()
        out = run_grpo(self.program, self.run_program, inputs, donate)
        self._state_returned = True
        seconds = (time.perf_counter() - began) / count
        trained, self.optimizer_state = self.program.training.final_state(out)
        self.weights = {**self.weights, **trained}  # with LoRA, the adapters only
        # Per step: the loss, the KL, the entropy and the gradients' norm
        # (before clipping), as the program computed them.
        computed = {k: np.asarray(out[k]) for k in ("loss", "kl", "entropy", "grad_norm")}
        for k, step in enumerate(steps):
            samples = self.rewards.take(step)
            values = {name: float(v[k]) for name, v in computed.items()}
            metrics = self._metrics(step, samples, values, seconds)
            log.step(step, metrics, samples)
        self.global_step = start + count
        if self.global_step % a.save_steps == 0 or self.global_step == self.total_steps:
            self._save_checkpoint()
        return [float(x) for x in computed["loss"]]

    def evaluate(self) -> dict:
        """TRL's metrics of the policy on eval_dataset, "eval_" in front."""
        if self.evaluator is None:
            raise TrainerConfigError(
                "evaluate() needs an eval_dataset and an eval_strategy other than 'no'"
            )
        reference = self.reference if self.lora is None else None
        metrics, _ = self.evaluator.evaluate(self.weights, reference, self.global_step)
        return {f"eval_{k}": v for k, v in metrics.items()}

    def _evaluate(self, log: RunLog) -> None:
        reference = self.reference if self.lora is None else None
        metrics, samples = self.evaluator.evaluate(self.weights, reference, self.global_step)
        log.evaluation(self.global_step, metrics, samples)

    def _metrics(self, step: int, samples, computed: dict, seconds: float) -> dict:
        """TRL's metrics of one step (see docs/rl.md); `computed`: the
        program's loss, kl, entropy and grad_norm of the step."""
        a = self.args
        out = {
            "loss": computed["loss"],
            "grad_norm": computed["grad_norm"],
            **sample_metrics(samples, self.rewards.names),
            "kl": computed["kl"],
            "entropy": computed["entropy"],
        }
        out.update(
            {
                # One update per batch: the ratio to the sampling policy is
                # exactly 1, so nothing is clipped (as TRL with num_iterations=1).
                "clip_ratio/low_mean": 0.0,
                "clip_ratio/high_mean": 0.0,
                "clip_ratio/region_mean": 0.0,
                # As transformers logs it: after the scheduler's step, the
                # rate of the next step.
                "learning_rate": a.learning_rate_at(step + 1, self.total_steps),
                "epoch": self.data.epoch_at(step, a.prompts_per_step),
                "step_seconds": seconds,
            }
        )
        return out

    def _save_checkpoint(self) -> Path:
        adapters = (
            {} if self.lora is None else {p: self.weights[p] for p in self.lora.adapter_paths()}
        )
        return save_checkpoint(
            self.args.output_dir,
            self.global_step,
            self.merged_weights(),
            self.optimizer_state,
            self.model.source,
            self.args.seed,
            exact=adapters,
            lora=_describe_lora(self.lora),
            write_more=self._save_adapter,
        )

    def _save_adapter(self, directory: Path) -> None:
        """With LoRA, the adapters in PEFT's format under directory/adapter
        (a directory of its own: beside model.safetensors, transformers
        would take adapter_config.json for the model)."""
        from pdg.models.lora import peft_expressible, save_adapter

        p = self.model
        if self.lora is None or not peft_expressible(self.lora, p.config, p.layout):
            return
        base = str(p.source.directory.resolve()) if hasattr(p.source, "directory") else ""
        save_adapter(directory / "adapter", self.lora, self.weights, p.config, p.layout, base)

    def merged_weights(self) -> dict:
        """The policy's weights by path, with LoRA's adapters folded in."""
        if self.lora is None:
            return self.weights
        from pdg.nn.lora import merge

        return merge(self.lora, self.weights)

    def save_model(self, output_dir=None) -> Path:
        """The policy as a Hugging Face directory (default output_dir):
        config.json, model.safetensors and the tokenizer's files (with
        LoRA, the adapters merged into the base weights, and in PEFT's
        format in adapter/)."""
        return save_policy(
            output_dir or self.args.output_dir,
            self.merged_weights(),
            self.model.source,
            write_more=self._save_adapter,
        )


@dataclasses.dataclass
class _Policy:
    name: str
    config: object  # DecoderConfig
    weights: dict
    tokenizer: object
    eos: tuple
    source: object  # what models.save takes: the loaded Model, or the config

    @property
    def layout(self) -> str:
        """The Hugging Face checkpoint layout its weights are saved in."""
        from pdg.models.config import LAYOUTS, hf_config

        hf = self.source.hf_config if hasattr(self.source, "hf_config") else None
        return LAYOUTS[hf_config(self.config, hf)["model_type"]]


def _load_model(model, tokenizer) -> _Policy:
    from pdg import models
    from pdg.nn import DecoderConfig

    if isinstance(model, (str, Path)):
        model = models.load(model)
    if isinstance(model, models.Model):
        return _Policy(
            model.directory.name, model.config, model.weights, model.tokenizer, model.eos, model
        )
    if (
        isinstance(model, tuple)
        and len(model) == 2
        and isinstance(model[0], DecoderConfig)
        and isinstance(model[1], dict)
    ):
        if tokenizer is None:
            raise TrainerConfigError(
                "a pdg model (config, weights) needs processing_class=<its tokenizer>"
            )
        return _Policy("model", model[0], model[1], tokenizer, (), model[0])
    raise TrainerConfigError(
        f"model must be a Hugging Face directory, a pdg.models.Model or (DecoderConfig, "
        f"weights), got {type(model).__name__}"
    )


def _stream_prompt_width(args, config) -> int:
    """The longest prompt of a streamed dataset (compiled before its
    prompts are read): pdg_prompt_width, or what the model's context
    leaves after max_completion_length."""
    if args.pdg_prompt_width is not None:
        return args.pdg_prompt_width
    room = config.max_positions - args.max_completion_length + 1
    if room < 1:
        raise TrainerConfigError(
            f"max_completion_length={args.max_completion_length} fills the model's context "
            f"({config.max_positions} positions)",
            "lower max_completion_length",
        )
    return room


def _lora_spec(peft_config, policy: _Policy):
    from pdg.models import ModelError
    from pdg.models.lora import lora_spec

    try:
        return lora_spec(peft_config, policy.config, policy.layout)
    except ModelError as e:
        raise TrainerConfigError(f"GRPOTrainer: {e}") from None


def _describe_lora(spec) -> str:
    """What a checkpoint records of the LoRA setup ('' without LoRA), to
    refuse resuming it with another."""
    if spec is None:
        return ""
    return (
        f"rank={spec.rank} alpha={spec.alpha} rslora={spec.rslora} targets={','.join(spec.targets)}"
    )


def _stop_ids(tokenizer) -> tuple[int, ...]:
    from .trainer import stop_ids

    try:
        return stop_ids(tokenizer)
    except ValueError as e:
        raise TrainerConfigError(str(e)) from None


def _default_cache() -> Path:
    from pdg.lowering.cache import default_cache

    return default_cache()
