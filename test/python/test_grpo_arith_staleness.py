"""examples/grpo_arith.py --one-program --staleness K: the option reaches
the compiled GRPO program (build_grpo(staleness=K), read back from the
trainer's program into every log row), it is refused without
--one-program, and examples/compare_runs.py plots the run's log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# A tiny run: 2 iterations of 4 prompts (one microbatch of 4) x 2.
ARGS = [
    "--one-program", "--limit", "6", "--d-model", "8", "--layers", "1", "--sft-steps", "2",
    "--grpo-steps", "2", "--prompts", "4", "--group", "2",
]  # fmt: skip


def example(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(EXAMPLES / "grpo_arith.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


def test_staleness_reaches_the_program(tmp_path):
    done = example(*ARGS, "--staleness", "2", "--out", str(tmp_path / "stale"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "compiled the GRPO program (sampling 2 updates behind)" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "stale" / "log.jsonl").open()]
    assert [r["step"] for r in rows] == [0, 1]
    assert all(r["staleness"] == 2 for r in rows)
    pytest.importorskip("matplotlib")
    plot = tmp_path / "compare.png"
    command = [sys.executable, str(EXAMPLES / "compare_runs.py"), str(tmp_path / "stale")]
    drawn = subprocess.run([*command, "--out", str(plot)], capture_output=True, text=True)
    assert drawn.returncode == 0, drawn.stderr
    assert "stale: held-out accuracy" in drawn.stdout and plot.stat().st_size > 0


def test_staleness_needs_the_one_program(tmp_path):
    done = example("--staleness", "1", "--out", str(tmp_path))
    assert done.returncode == 2
    assert "--staleness needs --one-program" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "log.jsonl").exists()


def test_compare_runs_refuses_a_missing_log(tmp_path):
    command = [sys.executable, str(EXAMPLES / "compare_runs.py"), str(tmp_path / "nothing")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 1
    assert "error:" in done.stderr and "Traceback" not in done.stderr
