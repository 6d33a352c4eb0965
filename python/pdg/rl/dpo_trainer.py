"""DPOTrainer with TRL's interface, on pdg's compiled DPO update.

    from datasets import Dataset
    from pdg.rl import DPOConfig, DPOTrainer          # was: from trl import ...

    pairs = Dataset.from_list([{"prompt": "2+3=", "chosen": "5", "rejected": "6"}, ...])
    trainer = DPOTrainer(
        model="path/to/Qwen2.5-0.5B",                 # a Hugging Face directory
        args=DPOConfig(output_dir="out", max_steps=100, beta=0.1),
        train_dataset=pairs,
    )
    trainer.train()

Each optimizer step reads per_device_train_batch_size preference pairs
(preference_data.py tokenizes them as TRL does) and updates the policy
once on DPO's loss against the frozen reference (the starting model, or
ref_model). One call of the program programs.build_rl_step compiles runs
pdg_steps_per_call steps, the weights and AdamW's state flowing from step
to step inside it; the logs, checkpoints and resuming are GRPOTrainer's
(run_log.py, checkpoints.py).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np

from .checkpoints import latest_checkpoint, load_checkpoint, save_checkpoint, save_policy
from .dpo_config import DPOConfig
from .errors import TrainerConfigError
from .grpo_trainer import TrainOutput, _default_cache, _load_model, _stop_ids
from .preference_data import PreferenceData
from .run_log import RunLog
from .trl_config import steps_of


class DPOTrainer:
    def __init__(
        self,
        model,
        ref_model=None,
        args: DPOConfig | None = None,
        data_collator=None,
        train_dataset=None,
        eval_dataset=None,
        processing_class=None,
        compute_metrics=None,
        callbacks=None,
        optimizers=(None, None),
        peft_config=None,
    ):
        """`model`: a Hugging Face model directory, a loaded
        pdg.models.Model, or (DecoderConfig, weights) with
        `processing_class` its tokenizer. `ref_model`: the frozen
        reference, the same kinds (None: the starting model)."""
        unsupported = {
            "data_collator": data_collator,
            "eval_dataset": eval_dataset,
            "compute_metrics": compute_metrics,
            "callbacks": callbacks,
            "peft_config (LoRA)": peft_config,
        }
        for name, value in unsupported.items():
            if value is not None:
                raise TrainerConfigError(f"DPOTrainer: {name} is not supported yet")
        if optimizers != (None, None):
            raise TrainerConfigError(
                "DPOTrainer: optimizers= is not supported",
                "the optimizer is AdamW, set by DPOConfig's learning_rate, adam_*, weight_decay",
            )
        if train_dataset is None:
            raise TrainerConfigError(
                "DPOTrainer needs a train_dataset with 'prompt', 'chosen' and 'rejected' columns"
            )
        if args is not None and not isinstance(args, DPOConfig):
            raise TrainerConfigError(
                f"DPOTrainer: args must be a DPOConfig, got {type(args).__name__}"
            )
        self.model = _load_model(model, processing_class)
        self.args = args or DPOConfig(output_dir=f"{self.model.name}-DPO")
        self.tokenizer = processing_class or self.model.tokenizer
        if self.tokenizer is None:
            raise TrainerConfigError(
                "the model has no tokenizer", "pass processing_class=<a tokenizer>"
            )
        self.config = dataclasses.replace(self.model.config, dtype=self.args.pdg_dtype)
        self.real = np.float64 if self.args.pdg_dtype == "f64" else np.float32
        self.reference = self._reference(ref_model, processing_class)
        eos = tuple(self.model.eos) or _stop_ids(self.tokenizer)
        self.data = PreferenceData(
            train_dataset, self.tokenizer, eos[0], self.args, self.config.max_positions
        )
        if self.data.size is not None and self.args.per_device_train_batch_size > self.data.size:
            raise TrainerConfigError(
                f"a step needs {self.args.per_device_train_batch_size} pairs "
                f"(per_device_train_batch_size); the dataset has {self.data.size}"
            )
        self.total_steps = steps_of(self.args, self.data.size)
        self.weights = {k: np.asarray(v, self.real) for k, v in self.model.weights.items()}
        self.optimizer_state = None
        self.global_step = 0
        self._build()

    def _reference(self, ref_model, tokenizer) -> dict:
        if ref_model is None:
            return {k: np.asarray(v, self.real) for k, v in self.model.weights.items()}
        ref = _load_model(ref_model, tokenizer)
        if dataclasses.replace(ref.config, dtype=self.config.dtype) != self.config:
            raise TrainerConfigError(
                "DPOTrainer: ref_model has another architecture than model",
                "give a reference of the same configuration (or None: the starting model)",
            )
        return {k: np.asarray(v, self.real) for k, v in ref.weights.items()}

    def _build(self) -> None:
        from pdg.frontend.errors import ProgramError, SourceLoc, fixed_location
        from pdg.losses import DPOAlgorithm
        from pdg.lowering.cache import build_artifact
        from pdg.programs import build_rl_step
        from pdg.runtime import load

        a = self.args
        algorithm = DPOAlgorithm(beta=a.beta, loss_type=a.loss, label_smoothing=a.label_smoothing)
        try:
            with fixed_location(SourceLoc("pdg.rl.DPOTrainer", 0)):
                self.program = build_rl_step(
                    self.config,
                    self.data.positions,
                    algorithm,
                    a.optimizer(self.total_steps),
                    clip_norm=a.max_grad_norm or None,
                )
        except ProgramError as e:
            raise TrainerConfigError(f"DPOTrainer: {e.message}", e.hint) from None
        cache = Path(a.pdg_cache) if a.pdg_cache else _default_cache()
        RunLog.message(f"pdg: DPO program: compiled once, then loaded from {cache}...")
        work = Path(tempfile.mkdtemp(prefix="pdg-dpo-trainer-"))
        built = build_artifact(self.program.program, "dpo_trainer", work, cache)
        RunLog.message(
            "pdg: DPO program "
            + ("loaded from the cache" if built.cached else f"compiled in {built.seconds:.1f} s")
        )
        self.run_program = load(built.path)

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
            saved = load_checkpoint(where, self.real)
            if saved.seed != a.seed:
                raise TrainerConfigError(
                    f"{where} was saved by a run with seed {saved.seed}, this one has {a.seed}",
                    "resume with the same DPOConfig",
                )
            self.weights, self.optimizer_state = saved.weights, saved.optimizer
            self.global_step = saved.step
        log = RunLog(a, self.total_steps, self.global_step, "DPO", ("loss", "rewards/margins"))
        losses = []
        try:
            while self.global_step < self.total_steps:
                losses += self._call(log)
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
        steps = list(range(start, start + count))
        per_step = a.per_device_train_batch_size
        rows = self.data.read(steps, per_step)
        epochs = [self.data.epoch_at(s, per_step) for s in steps]
        inputs = self.program.training.initial_inputs(
            self.weights, self.optimizer_state, start_step=start
        )
        inputs.update(
            self.program.reference.inputs_from({f"ref.{k}": v for k, v in self.reference.items()})
        )
        inputs.update(self.data.sequences(rows, self.real))
        began = time.perf_counter()
        out = self.run_program.run(inputs, {"P": per_step, "I": count}).outputs
        seconds = (time.perf_counter() - began) / count
        self.weights, self.optimizer_state = self.program.training.final_state(out)
        loss, norm = np.asarray(out["loss"]), np.asarray(out["grad_norm"])
        logps, ref_logps = np.asarray(out["logps"]), np.asarray(out["ref_logps"])
        for k, step in enumerate(steps):
            metrics = dpo_metrics(a.beta, logps[:, k], ref_logps[:, k])
            metrics = {"loss": float(loss[k]), "grad_norm": float(norm[k]), **metrics}
            metrics.update(
                {
                    "learning_rate": a.learning_rate_at(step + 1, self.total_steps),
                    "epoch": epochs[k],
                    "step_seconds": seconds,
                }
            )
            log.step(step, metrics, [])
        self.global_step = start + count
        if self.global_step % a.save_steps == 0 or self.global_step == self.total_steps:
            self._save_checkpoint()
        return [float(x) for x in loss]

    def _save_checkpoint(self) -> Path:
        return save_checkpoint(
            self.args.output_dir,
            self.global_step,
            self.weights,
            self.optimizer_state,
            self.model.source,
            self.args.seed,
        )

    def save_model(self, output_dir=None) -> Path:
        """The policy as a Hugging Face directory (default output_dir)."""
        return save_policy(output_dir or self.args.output_dir, self.weights, self.model.source)


def dpo_metrics(beta: float, logps: np.ndarray, ref_logps: np.ndarray) -> dict[str, float]:
    """TRL's DPO metrics of a batch, from each pair's summed log-probs
    (pairs, 2: chosen, rejected) under the policy and the reference."""
    rewards = beta * (np.asarray(logps, np.float64) - ref_logps)
    chosen, rejected = rewards[:, 0], rewards[:, 1]
    return {
        "rewards/chosen": float(chosen.mean()),
        "rewards/rejected": float(rejected.mean()),
        "rewards/accuracies": float((chosen > rejected).mean()),
        "rewards/margins": float((chosen - rejected).mean()),
        "logps/chosen": float(np.mean(logps[:, 0])),
        "logps/rejected": float(np.mean(logps[:, 1])),
    }
