"""Checkpoints of a training run: weights and optimizer state by name, in
one .npz written atomically (a temporary file renamed into place), so an
interrupted save never leaves a half-written checkpoint behind."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

FORMAT = "pdg-checkpoint-1"


def save_checkpoint(path, arrays: Mapping[str, np.ndarray], step: int) -> Path:
    """Writes `arrays` and the number of the next step to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {k: np.asarray(v) for k, v in arrays.items()}
    for reserved in ("__format__", "__step__"):
        if reserved in payload:
            raise ValueError(f"'{reserved}' is reserved in a checkpoint")
    payload["__format__"] = np.asarray(FORMAT)
    payload["__step__"] = np.asarray(step, np.int64)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_checkpoint(path) -> tuple[dict[str, np.ndarray], int]:
    """(arrays by name, the step to resume at)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__format__" not in data or str(data["__format__"]) != FORMAT:
                raise ValueError(f"{path} is not a pdg checkpoint")
            step = int(data["__step__"])
            arrays = {k: data[k] for k in data.files if k not in ("__format__", "__step__")}
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"cannot read checkpoint {path}: {e}") from None
    return arrays, step
