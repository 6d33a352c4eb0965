"""`pdg train CONFIG.yaml`: rl.GRPOTrainer from a config file, for scripts
and clusters.

    model: ./tiny-llama                 # a Hugging Face model directory
    train_dataset: problems.jsonl       # JSON lines (or a .json list) of rows
    eval_dataset: held_out.jsonl        # optional, with args.eval_strategy: steps
    reward_funcs:                       # module:function or file.py:function
      - rewards.py:correct_answer
    args:                               # rl.GRPOConfig's fields, TRL's names
      output_dir: out
      max_steps: 100
      num_generations: 8
    resume_from_checkpoint: null        # a checkpoint directory, or true
    peft_config:                        # optional: LoRA, PEFT's LoraConfig fields
      r: 16
      lora_alpha: 32
      target_modules: [q_proj, v_proj]

Relative paths are read from the config file's directory (output_dir
too). A mistake in the file is one message naming the key, exit code 1.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path

import click

from pdg.cli.common import UserError

KEYS = (
    "model",
    "train_dataset",
    "eval_dataset",
    "reward_funcs",
    "args",
    "resume_from_checkpoint",
    "peft_config",
)


@click.command("train")
@click.argument("config", metavar="CONFIG.yaml")
def train_command(config: str) -> None:
    """Train with rl.GRPOTrainer as CONFIG.yaml says (see docs/rl.md)."""
    from pdg import rl

    path = Path(config)
    spec = _read_yaml(path)
    base = path.parent
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise UserError(f"{path}: unknown key(s) {', '.join(unknown)}; the keys: {', '.join(KEYS)}")
    for key in ("model", "train_dataset", "reward_funcs"):
        if key not in spec:
            raise UserError(f"{path}: '{key}' is missing")
    args = spec.get("args") or {}
    if not isinstance(args, dict):
        raise UserError(f"{path}: 'args' must be a mapping of GRPOConfig fields")
    fields = rl.GRPOConfig.field_names()
    wrong = sorted(set(args) - set(fields))
    if wrong:
        raise UserError(f"{path}: args: {', '.join(wrong)} is not a GRPOConfig field")
    args = dict(args)
    args["output_dir"] = str(base / args.get("output_dir", "trainer_output"))
    funcs = spec["reward_funcs"]
    if isinstance(funcs, str):
        funcs = [funcs]
    if not isinstance(funcs, list) or not all(isinstance(f, str) for f in funcs):
        raise UserError(f"{path}: 'reward_funcs' must be a list of module:function names")
    resume = spec.get("resume_from_checkpoint")
    peft = _lora_config(spec.get("peft_config"), path)
    if isinstance(resume, str):
        resume = str(base / resume)
    try:
        trainer = rl.GRPOTrainer(
            model=str(base / str(spec["model"])),
            reward_funcs=[_function(f, base, path) for f in funcs],
            train_dataset=_read_rows(base / str(spec["train_dataset"]), path),
            eval_dataset=(
                _read_rows(base / str(spec["eval_dataset"]), path)
                if spec.get("eval_dataset")
                else None
            ),
            args=rl.GRPOConfig(**args),
            peft_config=peft,
        )
        result = trainer.train(resume_from_checkpoint=resume)
    except rl.TrainerConfigError as e:
        raise UserError(f"{path}: {e}") from None
    click.echo(f"trained {result.global_step} steps; checkpoints in {args['output_dir']}")


def _lora_config(fields, path: Path):
    """rl.LoraConfig from the file's peft_config mapping (None: no LoRA)."""
    from dataclasses import fields as dataclass_fields

    from pdg import rl

    if fields is None:
        return None
    known = [f.name for f in dataclass_fields(rl.LoraConfig)]
    if not isinstance(fields, dict):
        raise UserError(f"{path}: 'peft_config' must be a mapping of LoraConfig fields")
    wrong = sorted(set(fields) - set(known))
    if wrong:
        raise UserError(
            f"{path}: peft_config: {', '.join(wrong)} is not a LoraConfig field "
            f"(the fields: {', '.join(known)})"
        )
    return rl.LoraConfig(**fields)


def _read_yaml(path: Path) -> dict:
    try:
        import yaml
    except ImportError:
        raise UserError("pdg train needs PyYAML: pip install 'pdg[train]'") from None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise UserError(f"{path}: not valid YAML ({e})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping (model:, train_dataset:, ...)")
    return data


def _read_rows(path: Path, config: Path) -> list[dict]:
    """The dataset's rows: JSON lines (.jsonl), or a JSON list (.json)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{config}: train_dataset: cannot read {path}: {e.strerror}") from None
    try:
        if path.suffix == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif path.suffix == ".json":
            rows = json.loads(text)
        else:
            raise UserError(f"{config}: train_dataset: {path} is not .jsonl or .json")
    except ValueError as e:
        raise UserError(f"{config}: train_dataset: {path}: not valid JSON ({e})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise UserError(f"{config}: train_dataset: {path} must hold JSON objects, one per row")
    return rows


def _function(spec: str, base: Path, config: Path):
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name:
        raise UserError(f"{config}: reward_funcs: '{spec}' is not module:function")
    try:
        if where.endswith(".py"):
            file = base / where
            loader = importlib.util.spec_from_file_location(file.stem, file)
            if loader is None or loader.loader is None or not file.exists():
                raise UserError(f"{config}: reward_funcs: cannot find {file}")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            sys.path.insert(0, str(base))
            module = importlib.import_module(where)
    except UserError:
        raise
    except Exception as e:  # the user's module failed to import
        raise UserError(
            f"{config}: reward_funcs: importing {where} failed: {type(e).__name__}: {e}"
        ) from None
    if not callable(getattr(module, name, None)):
        raise UserError(f"{config}: reward_funcs: {where} has no function '{name}'")
    return getattr(module, name)
