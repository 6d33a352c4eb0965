"""The reward model of examples/reward_model_grpo.py for the tests: the
contract of build_grpo(reward_model=...), forward(ids (B, L) int64,
lengths (B,)) -> (B,) scores. The tests load the example's class rather
than keep a copy of it."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import torch
from torch import nn

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "reward_model_grpo.py"


@functools.cache
def example_module():
    """examples/reward_model_grpo.py as a module (its main() not run)."""
    spec = importlib.util.spec_from_file_location("reward_model_grpo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tiny_reward_model(vocab: int) -> nn.Module:
    """The example's encoder reward model at a test's size (d 16, 2 heads)."""
    return example_module().EncoderRewardModel(vocab, d=16, heads=2)


def torch_scores(model: nn.Module, completions) -> list[float]:
    """The model on each completion alone (B = 1, L = its length)."""
    out = []
    with torch.no_grad():
        for c in completions:
            ids = torch.tensor(list(map(int, c)), dtype=torch.int64)[None]
            out.append(float(model(ids, torch.tensor([ids.shape[1]]))[0]))
    return out
