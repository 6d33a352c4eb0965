"""Rotary position embeddings: the frequencies (RoPE's base `theta` and an
optional scaling of them for longer contexts) and the rotation itself.

The frequencies follow Hugging Face's conventions: one frequency per pair
of the head dim, `theta ** (-2i / head_dim)`, computed in float32;
"linear" scaling divides them all by `factor`; "llama3" scaling (Llama
3.1) divides the low frequencies (wavelength above
`original_max_positions / low_freq_factor`) by `factor`, keeps the high
ones (below `original_max_positions / high_freq_factor`) and interpolates
in between.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pdg.frontend as pf
from pdg.frontend import ProgramError, TensorLike

ROPE_KINDS = ("linear", "llama3")


@dataclass(frozen=True)
class RopeScaling:
    kind: str  # linear | llama3
    factor: float
    low_freq_factor: float = 1.0  # llama3
    high_freq_factor: float = 4.0  # llama3
    original_max_positions: int = 8192  # llama3: the context the model was trained on

    def __post_init__(self):
        if self.kind not in ROPE_KINDS:
            raise ProgramError(
                f"unknown rope scaling '{self.kind}'", hint=f"use one of {', '.join(ROPE_KINDS)}"
            )
        if not self.factor > 0:
            raise ProgramError(f"rope scaling needs a positive factor, got {self.factor}")
        if self.kind == "llama3" and not (
            0 < self.low_freq_factor < self.high_freq_factor and self.original_max_positions > 0
        ):
            raise ProgramError(
                "llama3 rope scaling needs 0 < low_freq_factor < high_freq_factor and a "
                "positive original_max_positions"
            )


def rope_frequencies(
    head_dim: int, theta: float = 10000.0, scaling: RopeScaling | None = None
) -> np.ndarray:
    """The (head_dim // 2,) float32 angular frequencies of the rotation."""
    if head_dim % 2:
        raise ProgramError(f"rotary embeddings need an even head dim, got {head_dim}")
    exponent = np.arange(0, head_dim, 2, dtype=np.float32) / np.float32(head_dim)
    inv = (np.float32(1.0) / np.power(np.float32(theta), exponent)).astype(np.float32)
    if scaling is None:
        return inv
    if scaling.kind == "linear":
        return (inv / np.float32(scaling.factor)).astype(np.float32)
    # llama3: by wavelength, in float32 as the reference computes it.
    s = scaling
    wavelength = np.float32(2 * math.pi) / inv
    low_wavelength = s.original_max_positions / s.low_freq_factor
    high_wavelength = s.original_max_positions / s.high_freq_factor
    scaled = np.where(wavelength > low_wavelength, inv / np.float32(s.factor), inv)
    smooth = (np.float32(s.original_max_positions) / wavelength - np.float32(s.low_freq_factor)) / (
        np.float32(s.high_freq_factor - s.low_freq_factor)
    )
    smoothed = (1 - smooth) * scaled / np.float32(s.factor) + smooth * scaled
    medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
    return np.where(medium, smoothed, scaled).astype(np.float32)


def rotary(
    x: TensorLike,
    position: TensorLike,
    base: float = 10000.0,
    frequencies: np.ndarray | None = None,
) -> TensorLike:
    """Rotary position embedding of x (..., heads, head_dim) at an integer
    position: the two halves of the last axis rotate by position * freq
    (the rotate-half convention). `frequencies` (head_dim // 2,), e.g. from
    rope_frequencies(), replace the default ones of `base`."""
    inv, rotated = rotary_parts(x, base, frequencies)
    angle = position.astype(x.dtype) * inv
    return x * pf.cos(angle) + rotated * pf.sin(angle)


def rotary_parts(
    x: TensorLike, base: float = 10000.0, frequencies: np.ndarray | None = None
) -> tuple[TensorLike, TensorLike]:
    """What rotary() rotates x by, apart from the position: the inverse
    frequencies of the head dim's lanes (head_dim,), and x with its halves
    swapped and the first negated (rotate_half). x at angles a is then
    x * cos(a) + rotated * sin(a), a = position * inv."""
    program = x.program
    hd = x.shape[-1]
    if hd is None or hd % 2:
        raise ProgramError("rotary() needs an even, static head dim")
    half = hd // 2
    if frequencies is None:
        frequencies = base ** (-np.arange(half, dtype=np.float64) * 2.0 / hd)
    frequencies = np.asarray(frequencies)
    if frequencies.shape != (half,):
        raise ProgramError(
            f"rotary() takes {half} frequencies for head dim {hd}, got {frequencies.shape}"
        )
    real = pf.dtypes.numpy_dtype(x.dtype)
    inv = program.constant_array(np.concatenate([frequencies, frequencies]).astype(real))
    # rotate_half(x) = concat(-x2, x1) as one gather and a sign flip.
    perm = program.constant_array(np.concatenate([np.arange(half, hd), np.arange(half)]), "i64")
    sign = program.constant_array(np.concatenate([-np.ones(half), np.ones(half)]).astype(real))
    return inv, pf.take(x, perm, axis=-1) * sign
