"""Checkpoints of a TRL-style run: output_dir/checkpoint-N/ holds the
policy as a Hugging Face directory (config.json, model.safetensors, the
tokenizer: transformers loads it) and the rest of the run's state in
trainer_state.safetensors: the optimizer's state (tensor "<path>/<slot>"
per pdg parameter path), and in its metadata the step, the seed and the
format. The data order and the sampling seed of every step are functions
of (seed, step), so these are the whole random state: a run resumed from
a checkpoint computes what the uninterrupted run computed, bit for bit.
Weights not in float32 (pdg_dtype="f64") are also kept exactly there
("weight/<path>"), since the Hugging Face copy is float32. A LoRA run's
Hugging Face copy is the merged model; its adapters are kept there
("weight/<path>.lora_a", ...), and the metadata's "lora" names its setup;
checkpoint-N/adapter/ holds them as PEFT saves them, where PEFT can.

A checkpoint is written into a temporary directory beside its place and
renamed there when complete: a run stopped while saving leaves no half
checkpoint.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import TrainerConfigError

STATE_FILE = "trainer_state.safetensors"
FORMAT = "pdg-grpo-trainer/1"
PATTERN = re.compile(r"^checkpoint-(\d+)$")


@dataclass
class Checkpoint:
    weights: dict[str, np.ndarray]
    optimizer: dict[str, dict[str, np.ndarray]]
    step: int
    seed: int
    lora: str = ""  # the LoRA setup ('' without)


def save_checkpoint(
    output_dir,
    step: int,
    weights,
    optimizer,
    model,
    seed: int,
    exact=None,
    lora: str = "",
    write_more=None,
) -> Path:
    """output_dir/checkpoint-<step>/ (see the module's docstring); `model`
    is what models.save takes (a loaded Model or a DecoderConfig);
    `exact`: more weights by path, kept only in the state file (LoRA's
    adapters); `lora`: the LoRA setup, recorded; `write_more(directory)`
    adds files before the checkpoint is complete."""
    from safetensors.numpy import save_file

    from pdg import models

    final = Path(output_dir) / f"checkpoint-{step}"
    temporary = Path(output_dir) / f".checkpoint-{step}.partial"
    if temporary.exists():
        shutil.rmtree(temporary)
    models.save(temporary, weights, model)
    tensors = {
        f"{path}/{slot}": np.ascontiguousarray(value)
        for path, slots in (optimizer or {}).items()
        for slot, value in slots.items()
    }
    for path, value in weights.items():
        if np.asarray(value).dtype != np.float32:
            tensors[f"weight/{path}"] = np.ascontiguousarray(value)
    for path, value in (exact or {}).items():
        tensors[f"weight/{path}"] = np.ascontiguousarray(value)
    metadata = {"format": FORMAT, "step": str(step), "seed": str(seed), "lora": lora}
    save_file(tensors, str(temporary / STATE_FILE), metadata=metadata)
    (temporary / "trainer_state.json").write_text(
        json.dumps({"global_step": step, "seed": seed}, indent=2) + "\n"
    )
    if write_more is not None:
        write_more(temporary)
    if final.exists():
        shutil.rmtree(final)
    os.replace(temporary, final)
    return final


def load_checkpoint(directory, dtype) -> Checkpoint:
    """The state saved by save_checkpoint(); weights as `dtype`."""
    from safetensors import safe_open

    from pdg import models

    directory = Path(directory)
    state = directory / STATE_FILE
    if not state.is_file():
        raise TrainerConfigError(
            f"{directory} is not a checkpoint of this trainer (no {STATE_FILE})",
            "give an output_dir/checkpoint-N directory, or True for the latest",
        )
    with safe_open(str(state), framework="numpy") as f:
        metadata = f.metadata() or {}
        if metadata.get("format") != FORMAT:
            raise TrainerConfigError(
                f"{state}: format {metadata.get('format')!r}, expected {FORMAT!r}"
            )
        arrays = {key: f.get_tensor(key) for key in f.keys()}
    weights = {k: np.asarray(v, dtype) for k, v in models.load(directory).weights.items()}
    optimizer: dict[str, dict[str, np.ndarray]] = {}
    for key, value in arrays.items():
        if key.startswith("weight/"):
            weights[key.removeprefix("weight/")] = value
            continue
        path, _, slot = key.rpartition("/")
        optimizer.setdefault(path, {})[slot] = value
    step, seed = int(metadata["step"]), int(metadata["seed"])
    return Checkpoint(weights, optimizer, step, seed, metadata.get("lora", ""))


def save_policy(output_dir, weights, model, write_more=None) -> Path:
    """The policy as a Hugging Face directory: config.json,
    model.safetensors and the tokenizer's files, written beside and moved
    into `output_dir` (what the trainers' save_model() writes);
    `write_more(directory)` adds files (LoRA's adapter/)."""
    from pdg import models

    target = Path(output_dir)
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".model-", dir=target))
    models.save(staging / "model", weights, model)
    if write_more is not None:
        write_more(staging / "model")
    for f in (staging / "model").iterdir():
        if f.is_dir() and (target / f.name).is_dir():
            shutil.rmtree(target / f.name)
        f.replace(target / f.name)
    (staging / "model").rmdir()
    staging.rmdir()
    return target


def latest_checkpoint(output_dir) -> Path:
    """The checkpoint with the highest step in output_dir."""
    found = []
    if Path(output_dir).is_dir():
        for entry in Path(output_dir).iterdir():
            match = PATTERN.match(entry.name)
            if match and entry.is_dir():
                found.append((int(match.group(1)), entry))
    if not found:
        raise TrainerConfigError(
            f"resume_from_checkpoint=True but {output_dir} has no checkpoint-N directory"
        )
    return max(found)[1]
