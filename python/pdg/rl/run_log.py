"""What a TRL-style run reports: a tqdm progress bar with its ETA,
TensorBoard event files under TRL's metric names (as transformers writes
them, "train/<name>", each the mean over the last `logging_steps` steps),
a JSONL line per step (output_dir/log.jsonl) and, every `logging_steps`,
a table of sample completions (TensorBoard text "train/completions" and
output_dir/completions.jsonl). With report_to="wandb", the same scalars
and a wandb.Table "completions" go to a wandb run (project $WANDB_PROJECT,
default "huggingface" as transformers'; its files in output_dir/wandb;
WANDB_MODE=offline runs without an account)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

from .errors import TrainerConfigError


class RunLog:
    """`name`: the progress bar's label; `shown`: the metrics it shows."""

    def __init__(
        self,
        config,
        total_steps: int,
        start_step: int,
        name: str = "GRPO",
        shown: tuple[str, ...] = ("reward", "kl"),
    ):
        self.shown = shown
        self.config, self.total = config, total_steps
        self.out = Path(config.output_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.window: dict[str, list[float]] = defaultdict(list)
        self.writer = None
        if "tensorboard" in config.report_targets():
            try:
                from tensorboardX import SummaryWriter
            except ImportError:
                raise TrainerConfigError(
                    "report_to='tensorboard' needs tensorboardX",
                    "pip install 'pdg[train]'",
                ) from None
            self.writer = SummaryWriter(str(config.logging_dir or self.out / "runs"))
        self.wandb = _wandb_run(config, self.out) if "wandb" in config.report_targets() else None
        self.bar = _progress(total_steps, start_step, config.disable_tqdm, name)

    def step(self, step: int, metrics: dict[str, float], samples) -> None:
        """Step `step` (from 0) is done with `metrics` and its samples."""
        done = step + 1
        with open(self.out / "log.jsonl", "a") as f:
            f.write(json.dumps({"step": done, **metrics}) + "\n")
        for name, value in metrics.items():
            self.window[name].append(value)
        if done % self.config.logging_steps == 0 or done == self.total:
            self._flush(done, samples)
        if self.bar is not None:
            self.bar.set_postfix({k: f"{metrics[k]:.4g}" for k in self.shown if k in metrics})
            self.bar.update(1)

    def evaluation(self, step: int, metrics: dict[str, float], samples) -> None:
        """An evaluation after `step` steps: log.jsonl gets a line of
        "eval_<name>" values, TensorBoard and wandb "eval/<name>" (as
        transformers writes evaluation metrics); with log_completions its
        samples go to completions.jsonl, marked "eval"."""
        with open(self.out / "log.jsonl", "a") as f:
            line = {"step": step, **{f"eval_{k}": v for k, v in metrics.items()}}
            f.write(json.dumps(line) + "\n")
        if self.writer is not None:
            for name, value in metrics.items():
                self.writer.add_scalar(f"eval/{name}", value, step)
            self.writer.flush()
        if self.wandb is not None:
            self.wandb.log({f"eval/{name}": value for name, value in metrics.items()}, step=step)
        if getattr(self.config, "log_completions", False) and samples:
            with open(self.out / "completions.jsonl", "a") as f:
                for s in samples:
                    line = {"step": step, "eval": True, "prompt": s.prompt}
                    f.write(json.dumps({**line, "completion": s.completion, "reward": s.reward}))
                    f.write("\n")

    def _flush(self, done: int, samples) -> None:
        means = {k: sum(v) / len(v) for k, v in self.window.items()}
        self.window.clear()
        if self.writer is not None:
            for name, value in means.items():
                self.writer.add_scalar(f"train/{name}", value, done)
        if self.wandb is not None:
            self.wandb.log({f"train/{name}": value for name, value in means.items()}, step=done)
        if getattr(self.config, "log_completions", False) and samples:
            count = self.config.num_completions_to_print or len(samples)
            shown = samples[:count]
            with open(self.out / "completions.jsonl", "a") as f:
                for s in shown:
                    line = {"step": done, "prompt": s.prompt, "completion": s.completion}
                    f.write(json.dumps({**line, "reward": s.reward}) + "\n")
            if self.writer is not None:
                self.writer.add_text("train/completions", _table(shown), done)
            if self.wandb is not None:
                import wandb

                rows = [[done, _text(s.prompt), _text(s.completion), s.reward] for s in shown]
                columns = ["step", "prompt", "completion", "reward"]
                self.wandb.log({"completions": wandb.Table(columns=columns, data=rows)}, step=done)
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            self.writer.close()
        if self.wandb is not None:
            self.wandb.finish()

    @staticmethod
    def message(text: str) -> None:
        print(text, file=sys.stderr, flush=True)


def _progress(total: int, start: int, disabled: bool, name: str):
    if disabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise TrainerConfigError(
            "the progress bar needs tqdm", "pip install 'pdg[train]' (or disable_tqdm=True)"
        ) from None
    return tqdm(total=total, initial=start, desc=name, unit="step", dynamic_ncols=True)


def _wandb_run(config, out: Path):
    try:
        import wandb
    except ImportError:
        raise TrainerConfigError(
            "report_to='wandb' needs wandb", "pip install wandb, or report_to='tensorboard'"
        ) from None
    try:
        return wandb.init(
            project=os.environ.get("WANDB_PROJECT", "huggingface"),
            name=out.name,
            dir=str(out),
            config=dataclasses.asdict(config),
        )
    except Exception as e:  # wandb's own errors: no account, no network
        raise TrainerConfigError(
            f"wandb could not start a run: {e}",
            "log in with `wandb login`, or set WANDB_MODE=offline",
        ) from None


def _text(value) -> str:
    """A prompt or completion as text (chat messages as JSON)."""
    return value if isinstance(value, str) else json.dumps(value)


def _table(samples) -> str:
    """A markdown table (TensorBoard renders it) of prompt, completion, reward."""

    def cell(value) -> str:
        return _text(value).replace("|", "\\|").replace("\n", "<br>")

    lines = ["| prompt | completion | reward |", "| --- | --- | --- |"]
    lines += [f"| {cell(s.prompt)} | {cell(s.completion)} | {s.reward:.4g} |" for s in samples]
    return "\n".join(lines)
