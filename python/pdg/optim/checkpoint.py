"""Checkpoints of a training run: weights and optimizer state by name, in
one .npz written atomically (a temporary file renamed into place), so an
interrupted save (even kill -9) never leaves a half-written checkpoint:
the path holds the old checkpoint or the new one. The temporary file of a
killed save is removed by the next save into the same directory (see
pdg.atomic_files)."""

from __future__ import annotations

import os
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pdg.atomic_files import clean_stale, fsync_directory, pause_for_tests, scratch_path

FORMAT = "pdg-checkpoint-1"


class CheckpointError(ValueError):
    """A file that is not a readable pdg checkpoint (missing, damaged, or
    another kind of file)."""


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
    clean_stale(path.parent)
    tmp = scratch_path(path)
    try:
        with open(tmp, "xb") as f:
            np.savez(f, **payload)
            f.flush()
            os.fsync(f.fileno())
        pause_for_tests("checkpoint-written")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)
    return path


def load_checkpoint(path) -> tuple[dict[str, np.ndarray], int]:
    """(arrays by name, the step to resume at); CheckpointError (a
    ValueError) if `path` is not a readable checkpoint."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            if "__format__" not in data or str(data["__format__"]) != FORMAT:
                raise CheckpointError(f"{path} is not a pdg checkpoint")
            step = int(data["__step__"])
            arrays = {k: data[k] for k in data.files if k not in ("__format__", "__step__")}
    except CheckpointError:
        raise
    # A damaged file fails in zipfile (BadZipFile), in decompressing
    # (zlib.error) or in reading an array (EOFError, ValueError).
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        reason = "the file is empty or cut short" if isinstance(e, EOFError) else e
        raise CheckpointError(
            f"cannot read checkpoint {path}: {reason} (damaged or not a checkpoint; "
            "resume from another checkpoint or start again)"
        ) from None
    return arrays, step
