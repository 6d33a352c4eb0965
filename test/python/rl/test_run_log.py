"""What a TRL-style run reports (rl.run_log.RunLog), without compiling:
every step in log.jsonl, the means over `logging_steps` steps under
"train/<name>" in TensorBoard and in a wandb run (offline: wandb's own
files in output_dir/wandb, read back here from its record log), and the
completions table."""

from __future__ import annotations

import json
import struct
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("tensorboardX")
wandb = pytest.importorskip("wandb")

from pdg import rl  # noqa: E402
from pdg.rl.run_log import RunLog  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_wandb():
    """wandb keeps its settings (the mode) for the process: each test
    starts its own."""
    wandb.teardown()
    yield
    wandb.teardown()


@dataclass
class Sample:
    prompt: str
    completion: str
    reward: float


def wandb_history(run_dir: Path) -> list[dict]:
    """The history rows of an offline wandb run, from its .wandb file: a
    7-byte header, then a LevelDB-style log (32 KiB blocks of records,
    each a CRC, a length, a kind: full, first, middle or last piece) of
    wandb's Record protobufs."""
    from wandb.proto import wandb_internal_pb2

    (path,) = run_dir.glob("wandb/offline-run-*/run-*.wandb")
    data, at, pending, rows = path.read_bytes(), 7, b"", []
    while at + 7 <= len(data):
        if 32768 - at % 32768 < 7:  # a block's tail too short for a header
            at += 32768 - at % 32768
            continue
        _, length, kind = struct.unpack("<IHB", data[at : at + 7])
        if at + 7 + length > len(data):  # still being written
            break
        pending += data[at + 7 : at + 7 + length]
        at += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            if record.WhichOneof("record_type") == "history":
                rows.append(
                    {i.key or "/".join(i.nested_key): i.value_json for i in record.history.item}
                )
    return rows


def settled_history(run_dir: Path, rows: int = 2, seconds: float = 60) -> list[dict]:
    """The history once wandb's service has written it: run.finish()
    returns before its writer process has flushed the file on a busy
    machine."""
    deadline = time.monotonic() + seconds
    while True:
        history = wandb_history(run_dir)
        if len(history) >= rows or time.monotonic() > deadline:
            return history
        time.sleep(0.2)


def test_wandb_gets_the_tensorboard_scalars_and_the_completions(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    config = rl.GRPOConfig(
        output_dir=str(tmp_path),
        report_to=["tensorboard", "wandb"],
        logging_steps=2,
        log_completions=True,
        disable_tqdm=True,
        max_steps=4,
    )
    log = RunLog(config, total_steps=4, start_step=0)
    for step in range(4):
        metrics = {"reward": float(step), "kl": 0.5 * step, "loss": 1.0}
        log.step(step, metrics, [Sample("2+3=", "5", float(step))])
    log.close()
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 4
    history = settled_history(tmp_path)
    rows = [r for r in history if "train/reward" in r]
    assert [int(r["_step"]) for r in rows] == [2, 4]
    # The mean over each window of logging_steps steps, as TensorBoard's.
    assert [float(r["train/reward"]) for r in rows] == [0.5, 2.5]
    assert [float(r["train/kl"]) for r in rows] == [0.25, 1.25]
    tables = [r for r in history if "completions/_type" in r]
    assert len(tables) == 2 and json.loads(tables[0]["completions/nrows"]) == 1


def test_wandb_needs_an_account_or_offline_mode(tmp_path, monkeypatch):
    """Online without credentials (and without a terminal to ask): one
    error naming the fix, not wandb's traceback."""
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    monkeypatch.setenv("HOME", str(tmp_path))
    config = rl.GRPOConfig(output_dir=str(tmp_path / "out"), report_to="wandb", disable_tqdm=True)
    with pytest.raises(rl.TrainerConfigError, match="WANDB_MODE=offline"):
        RunLog(config, total_steps=1, start_step=0)
