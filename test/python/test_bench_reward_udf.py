"""bench/reward_udf.py stays runnable: it times the GRPO program's reward
callback on a small batch and writes its results file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_reward_udf_benchmark_writes_a_row_per_length(tmp_path):
    out = tmp_path / "reward_udf.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "reward_udf.py"), "--new-tokens", "2", "5"]
        + ["--repeats", "1", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    runs = json.loads(out.read_text())["runs"]
    assert [r["new_tokens"] for r in runs] == [2, 5]
    assert all(r["ms_per_iteration"] > 0 for r in runs)
