"""LoRA: low-rank adapters on chosen projections of a frozen model.

A Linear `h0.attn.q` with an adapter computes

    y = x @ w + scale * (x @ lora_a) @ lora_b + b

with lora_a (d_in, rank) and lora_b (rank, d_out) the only weights that
train; `scale` is alpha / rank (alpha / sqrt(rank) with rslora). The
base model's weights are program inputs, not recurrences over the
training iteration, so they have no per-iteration copy, gradient store or
optimizer state (Program.frozen_parameters). The adapters start as PEFT
starts them: lora_a uniform in +-1/sqrt(d_in), lora_b zero, so training
starts from the base model exactly. merge() folds them into the base
weights for export.

Targets are Linear paths relative to the model (`h0.attn.q`,
`h3.mlp.down`); pdg.models.lora reads PEFT's `target_modules` names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pdg.frontend import ProgramError

from .layers import Linear, Module

ADAPTER_LEAVES = ("lora_a", "lora_b")


@dataclass(frozen=True)
class LoraSpec:
    rank: int
    alpha: float
    targets: tuple[str, ...]  # Linear paths relative to the model, e.g. "h0.attn.q"
    rslora: bool = False  # scale by alpha / sqrt(rank) (rank-stabilized LoRA)

    def __post_init__(self):
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1:
            raise ProgramError(f"LoRA rank must be a positive integer, got {self.rank!r}")
        if not isinstance(self.alpha, (int, float)) or not self.alpha > 0:
            raise ProgramError(f"LoRA alpha must be a positive number, got {self.alpha!r}")
        if not self.targets:
            raise ProgramError("LoRA needs at least one target projection")

    @property
    def scale(self) -> float:
        return self.alpha / (math.sqrt(self.rank) if self.rslora else self.rank)

    def adapter_paths(self) -> list[str]:
        """The trainable weights' paths: `<target>.lora_a`, `<target>.lora_b`."""
        return [f"{t}.{leaf}" for t in self.targets for leaf in ADAPTER_LEAVES]


def add_adapters(model: Module, spec: LoraSpec) -> None:
    """Gives each target Linear of `model` (paths relative to model.path)
    an adapter of the spec's rank and scale."""
    prefix = f"{model.path}." if model.path else ""
    linears = {m.path.removeprefix(prefix): m for m in model.modules() if isinstance(m, Linear)}
    for target in spec.targets:
        if target not in linears:
            known = ", ".join(sorted(linears)[:8])
            raise ProgramError(
                f"LoRA target '{target}' is not a projection of the model",
                hint=f"targets are Linear paths such as {known}",
            )
        if linears[target].adapter is None:
            linears[target].add_adapter(spec.rank, spec.scale)


def init_adapters(
    spec: LoraSpec, weights: Mapping[str, np.ndarray], seed: int, dtype=np.float32
) -> dict[str, np.ndarray]:
    """Starting adapters for base `weights` (by path): lora_a uniform in
    +-1/sqrt(d_in) (PEFT's Kaiming-uniform with a = sqrt(5)), lora_b zero."""
    rng = np.random.default_rng(seed)
    out = {}
    for target in spec.targets:
        d_in, d_out = np.shape(weights[f"{target}.w"])
        bound = 1.0 / math.sqrt(d_in)
        out[f"{target}.lora_a"] = rng.uniform(-bound, bound, (d_in, spec.rank)).astype(dtype)
        out[f"{target}.lora_b"] = np.zeros((spec.rank, d_out), dtype)
    return out


def merge(spec: LoraSpec, weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The base weights with each adapter folded in (w + scale * a @ b,
    summed in float64), without the adapters: a plain model."""
    out = {k: v for k, v in weights.items() if k.rsplit(".", 1)[-1] not in ADAPTER_LEAVES}
    for target in spec.targets:
        w = np.asarray(weights[f"{target}.w"])
        a = np.asarray(weights[f"{target}.lora_a"], np.float64)
        b = np.asarray(weights[f"{target}.lora_b"], np.float64)
        out[f"{target}.w"] = (w + spec.scale * (a @ b)).astype(w.dtype)
    return out
