"""Checkpoint files: a damaged or empty file is a CheckpointError (a
ValueError) that says so, never a zipfile or EOF error; a save replaces
the old checkpoint in one step and removes a killed save's temporary file."""

from __future__ import annotations

import os

import numpy as np
import pytest
from leftovers import dead_pid, leftover_name
from pdg import optim


def saved(tmp_path, step: int = 3):
    path = tmp_path / "ckpt.npz"
    optim.save_checkpoint(path, {"weight/w": np.arange(1000.0)}, step)
    return path


@pytest.mark.parametrize("damage", ["cut short", "zeroed middle", "empty"])
def test_a_damaged_checkpoint_is_a_checkpoint_error(tmp_path, damage):
    path = saved(tmp_path)
    data = path.read_bytes()
    if damage == "cut short":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "zeroed middle":
        path.write_bytes(data[:100] + bytes(len(data) - 200) + data[-100:])
    else:
        path.write_bytes(b"")
    with pytest.raises(ValueError, match=f"cannot read checkpoint {path}") as e:
        optim.load_checkpoint(path)
    assert isinstance(e.value, optim.CheckpointError) and "start again" in str(e.value)


def test_save_replaces_and_cleans_a_killed_saves_temporary_file(tmp_path):
    path = saved(tmp_path, step=3)
    # What a save killed before its rename leaves: a temporary file named
    # for its (now dead) pid; a live process's is left alone.
    dead = tmp_path / leftover_name(path.name, "scratch", dead_pid())
    live = tmp_path / leftover_name(path.name, "scratch", os.getppid())
    dead.write_bytes(b"half")
    live.write_bytes(b"busy")
    optim.save_checkpoint(path, {"weight/w": np.ones(3)}, 4)
    arrays, step = optim.load_checkpoint(path)
    assert step == 4 and arrays["weight/w"].tolist() == [1.0, 1.0, 1.0]
    assert not dead.exists() and live.exists()
    live.unlink()
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.npz"]
