"""examples/reward_model_grpo.py end to end at a tiny budget (interpreted:
the compiled path is test_reward_model_grpo.py's): it fits the PyTorch
reward model, runs GRPO iterations with the model scoring inside the
program and prints each iteration's mean reward."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

pytest.importorskip("torch")
from .reward_models import example_module  # noqa: E402

LINE = re.compile(r"iteration (\d+): mean reward ([-+]\d\.\d{4})  loss ([-+]\d\.\d{4})")


def test_the_example_runs_and_prints_finite_rewards(monkeypatch, import_cache):
    monkeypatch.setenv("PDG_TORCH_IMPORT_CACHE", str(import_cache))
    example = example_module()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = example.main(
            ["--iterations", "2", "--prompts", "2", "--group", "2", "--fit-steps", "20",
             "--interpret"]
        )  # fmt: skip
    lines = LINE.findall(printed.getvalue())
    assert [int(i) for i, _, _ in lines] == [0, 1], printed.getvalue()
    rewards = result["rewards"]  # [p, i, M * G]
    assert rewards.shape == (1, 2, 4) and np.isfinite(rewards).all()
    assert [float(m) for _, m, _ in lines] == pytest.approx(rewards.mean(axis=(0, 2)), abs=1e-4)
    assert "reward model fitted in PyTorch: 20 steps" in printed.getvalue()
