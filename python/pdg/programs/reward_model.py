"""A PyTorch reward model inside the GRPO program: each finished completion
is scored by an imported nn.Module (pdg.nn.from_torch) in the compiled
program, instead of by a host callback.

The model's contract (a Hugging Face sequence classifier's, with lengths
for the attention mask): `model(ids, lengths) -> scores`, where `ids` is
(B, L) int64, row b holding a completion's token ids in `ids[b, :lengths[b]]`
(from its first sampled token up to and with its EOS, as the host reward
sees it) and 0 after, `lengths` is (B,) int64, and `scores` is (B,) or
(B, 1) floating point. L varies from run to run (the model is imported with
a dynamic L): mask by `lengths`, and take positions from `arange(L)`
rather than slicing a table to L.

pdg feeds it one point's completions at a time: the rows of a microbatch
(B = M * G) in the group layout, one completion (B = 1) in the completion
layout. The completions are cut out of the point's sampled tokens inside
the imported function itself (a gather written in torch, so it lowers like
the model), which is why the model is wrapped before import: the wrapper
takes the point's tokens along t and each row's first completion step (its
prompt length - 1), and finds each completion's end (its first EOS, or
max_new_tokens) from the tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pdg.frontend as pf
from pdg.frontend.errors import ProgramError

# The wrapper holds the user's module as `model`: its weights are the
# state_dict entries `model.<name>`, so bound at path "reward" they are the
# program inputs `reward_model_<name>`.
PATH = "reward"
_PREFIX = "model."


@dataclass
class RewardModel:
    """A torch.nn.Module reward model for build_grpo(reward_model=...).
    `cache_dir`: where its import is kept (see pdg.nn.from_torch)."""

    module: object
    cache_dir: str | Path | None | bool = True


def as_reward_model(value) -> RewardModel:
    if isinstance(value, RewardModel):
        return value
    return RewardModel(value)


class BoundRewardModel:
    """The imported reward model in one GRPO program: its weights (program
    inputs) and the node that scores a point's completions."""

    def __init__(
        self,
        program: pf.Program,
        spec: RewardModel,
        rows: int | None,
        eos: tuple[int, ...],
        max_new_tokens: int,
    ):
        from pdg.nn import from_torch
        from pdg.nn.from_torch import TorchModule

        self.spec = spec
        self.rows = rows
        wrapper, example, dynamic = _wrapped(spec.module, rows, eos, max_new_tokens)
        imported = from_torch(wrapper, example, dynamic_shapes=dynamic, cache_dir=spec.cache_dir)
        want = (rows,) if rows else ()
        result = imported.result_type
        if result.dtype not in ("f32", "f64") or tuple(result.shape) != want:
            raise ProgramError(
                f"the reward model gives {result.mlir()} for {rows or 1} completion(s); it must "
                f"give one floating-point score each",
                hint="return scores of shape (B,) or (B, 1) from forward(ids, lengths)",
            )
        self.module: TorchModule = imported.bind(program, PATH)

    def __call__(self, steps, start, dtype: str) -> pf.RecurrentTensor:
        """Each completion's score: `steps` the point's sampled tokens along
        t ((T, B), or (T,) for one completion), `start` each row's first
        completion step (int64)."""
        scores = self.module(steps, start)
        return scores if scores.dtype == dtype else scores.astype(dtype)

    def inputs_from(self, weights: Mapping | None) -> dict[str, np.ndarray]:
        """The reward model's weights as program inputs: `weights` a
        state_dict of the user's module (None: the module's own, now)."""
        if weights is None:
            weights = self.spec.module.state_dict()
        for p in self.module.function.params:
            name = p.name.removeprefix(_PREFIX)
            if name not in weights:
                raise ProgramError(
                    f"the reward model's weight '{name}' is missing from reward_weights",
                    hint="give the module's whole state_dict()",
                )
        return self.module.inputs_from({_PREFIX + k: v for k, v in weights.items()})


def _wrapped(module, rows: int | None, eos: tuple[int, ...], max_new_tokens: int):
    """The module behind the gather that cuts a point's completions out of
    its tokens along t, with example inputs and the dynamic axis (T). Each
    completion's length is found here from its tokens (its first EOS), the
    host reward's definition, not from the program's step mask."""
    import torch

    if not isinstance(module, torch.nn.Module):
        raise ProgramError(
            f"reward_model must be a torch.nn.Module, got {type(module).__name__}",
            hint="pass the module (forward(ids, lengths) -> scores), or a "
            "pdg.programs.RewardModel of it",
        )

    class CompletionScorer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = module

        def forward(self, steps, start):
            if steps.dim() == 1:  # one completion per point
                steps, start = steps[:, None], start[None]
            count = steps.shape[0]
            k = torch.arange(count)[None, :]
            at = (start[:, None] + k).clamp(max=count - 1)
            ids = torch.gather(steps.transpose(0, 1), 1, at)
            # A completion: up to and with its first EOS, at most
            # max_new_tokens, within the steps that ran (as the host reward).
            # (Sizes stay on the right of tensor arithmetic: torch-mlir
            # cannot lower `size - tensor`.)
            inside = (start[:, None] + k < count) & (k < max_new_tokens)
            hit = ids == eos[0]
            for other in eos[1:]:
                hit = hit | (ids == other)
            ended = inside & hit
            # The first EOS's index (count or more where there is none).
            first = (k + (~ended).to(torch.int64) * count).min(dim=1).values
            lengths = torch.minimum(first + 1, inside.sum(1))
            ids = torch.where(k < lengths[:, None], ids, torch.zeros_like(ids))
            scores = self.model(ids, lengths)
            return scores.reshape(-1) if rows else scores.reshape(())

    steps = torch.zeros((3, rows) if rows else (3,), dtype=torch.int64)
    start = torch.zeros((rows,) if rows else (), dtype=torch.int64)
    return CompletionScorer(), (steps, start), [{0: "steps"}, None]
