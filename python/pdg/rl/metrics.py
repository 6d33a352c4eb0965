"""TRL's metrics of a batch of scored completions (rewards.Sample): the
reward, its std within each prompt's group, each reward function's mean
and std, and the completions' lengths. The training step's metrics and the
evaluation's ("eval_" in front) share them."""

from __future__ import annotations

import numpy as np


def sample_metrics(samples, function_names) -> dict[str, float]:
    rewards = np.array([s.reward for s in samples])
    by_prompt: dict[int, list[float]] = {}
    for s in samples:
        by_prompt.setdefault(s.key, []).append(s.reward)
    stds = [np.std(v, ddof=1) for v in by_prompt.values()]
    out = {
        "reward": float(rewards.mean()),
        "reward_std": float(np.mean(stds)),
        "frac_reward_zero_std": float(np.mean([sd == 0 for sd in stds])),
    }
    per_function = np.array([s.rewards for s in samples])
    for j, name in enumerate(function_names):
        column = per_function[:, j]
        known = column[~np.isnan(column)]
        out[f"rewards/{name}/mean"] = float(known.mean()) if known.size else float("nan")
        out[f"rewards/{name}/std"] = float(known.std(ddof=1)) if known.size > 1 else 0.0
    lengths = np.array([s.length for s in samples], np.float64)
    clipped = np.array([s.clipped for s in samples])
    ended = lengths[~clipped]
    out.update(
        {
            "completions/mean_length": float(lengths.mean()),
            "completions/min_length": float(lengths.min()),
            "completions/max_length": float(lengths.max()),
            "completions/clipped_ratio": float(clipped.mean()),
            "completions/mean_terminated_length": float(ended.mean()) if ended.size else 0.0,
        }
    )
    return out
