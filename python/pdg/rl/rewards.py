"""Reward functions with TRL's calling convention, as the compiled GRPO
program's reward callback.

    def reward(prompts, completions, completion_ids, **columns) -> list[float | None]

`prompts` are the dataset's prompts (text or messages), `completions` the
decoded completions (for chat prompts, [{"role": "assistant", "content":
text}] each), `completion_ids` their token ids (EOS included when a
completion ended on it), and `columns` every other column of the dataset,
one value per completion. Several functions combine as TRL combines them:
the weighted sum of their values, a None (a function that does not apply
to a sample) left out. The program calls the callback once per microbatch
with each completion's key; a key names the step of the call and the
dataset row, so the per-function values and the samples are recorded for
the logs by step.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from .errors import TrainerConfigError


@dataclass
class Sample:
    key: int  # its prompt's key: a step's completions of one prompt share it
    prompt: object
    completion: str
    length: int  # tokens, EOS included
    clipped: bool  # cut at max_completion_length without an EOS
    rewards: list[float]  # one per function (nan: None)
    reward: float  # the weighted sum


class RewardFunctions:
    def __init__(self, funcs, weights: Sequence[float] | None, data, tokenizer, eos):
        funcs = list(funcs) if isinstance(funcs, (list, tuple)) else [funcs]
        if not funcs:
            raise TrainerConfigError("reward_funcs is empty", "give at least one reward function")
        for f in funcs:
            if not callable(f):
                raise TrainerConfigError(
                    f"reward_funcs: {f!r} is not callable",
                    "reward models (a model id) are not supported; pass a function "
                    "f(prompts, completions, completion_ids, **columns) -> list[float]",
                )
        if weights is None:
            weights = [1.0] * len(funcs)
        if len(weights) != len(funcs):
            raise TrainerConfigError(
                f"reward_weights has {len(weights)} values for {len(funcs)} reward functions"
            )
        self.funcs, self.weights = funcs, np.asarray(weights, np.float64)
        self.names = [getattr(f, "__name__", type(f).__name__) for f in funcs]
        self.data, self.tok, self.eos = data, tokenizer, set(eos)
        self.rows: dict[int, tuple[int, int]] = {}  # key -> (step, dataset row)
        self.samples: dict[int, list[Sample]] = defaultdict(list)  # step -> its samples
        self.state = SimpleNamespace(global_step=0, max_steps=0)  # TRL's trainer_state

    def plan(self, steps: Sequence[int], rows: Sequence[Sequence[int]]) -> list[list[int]]:
        """Keys for a call running `steps`, step k on dataset rows
        rows[k]: keys[k][p] (see the module's docstring)."""
        self.rows.clear()
        keys = []
        for k, (step, batch) in enumerate(zip(steps, rows, strict=True)):
            keys.append([])
            for p, row in enumerate(batch):
                key = k * len(batch) + p
                self.rows[key] = (step, row)
                keys[-1].append(key)
        return keys

    def __call__(self, keys, prompt_ids, completion_ids) -> list[float]:
        rows = [self.data.rows[self.rows[k][1]] for k in keys]
        ids = [[int(t) for t in c] for c in completion_ids]
        texts = [self.tok.decode(c) for c in ids]
        prompts = [r["prompt"] for r in rows]
        if self.data.conversational:
            completions = [[{"role": "assistant", "content": t}] for t in texts]
        else:
            completions = texts
        columns = {c: [r[c] for r in rows] for c in self.data.columns}
        values = np.empty((len(keys), len(self.funcs)), np.float64)
        for j, (f, name) in enumerate(zip(self.funcs, self.names, strict=True)):
            out = f(
                prompts=prompts,
                completions=completions,
                completion_ids=ids,
                trainer_state=self.state,
                **columns,
            )
            values[:, j] = _checked(out, len(keys), name)
        weighted = values * self.weights
        total = np.where(np.isnan(weighted), 0.0, weighted).sum(axis=1)
        for k, key in enumerate(keys):
            step = self.rows[key][0]
            clipped = not (ids[k] and ids[k][-1] in self.eos)
            self.samples[step].append(
                Sample(key, prompts[k], texts[k], len(ids[k]), clipped, list(values[k]), total[k])
            )
        return [float(v) for v in total]

    def take(self, step: int) -> list[Sample]:
        """The samples of `step` (and forget them)."""
        return self.samples.pop(step, [])


def _checked(out, count: int, name: str) -> list[float]:
    if not isinstance(out, (list, tuple, np.ndarray)) or len(out) != count:
        got = f"{len(out)} values" if hasattr(out, "__len__") else type(out).__name__
        raise TrainerConfigError(
            f"reward function '{name}' returned {got} for {count} completions",
            "return a list with one float (or None) per completion",
        )
    values = []
    for v in out:
        if v is None:
            values.append(math.nan)
            continue
        try:
            values.append(float(v))
        except (TypeError, ValueError):
            raise TrainerConfigError(
                f"reward function '{name}' returned {v!r}", "each value must be a float or None"
            ) from None
    return values
