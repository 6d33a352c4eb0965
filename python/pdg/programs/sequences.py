"""What the sequence programs share about their model: which token ids end
a sequence (one or several: Llama 3 instruct models stop on any of
three), and how many positions a model with learned position embeddings
can see."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import pdg.frontend as pf
from pdg.nn import DecoderConfig


def eos_ids(eos: int | Sequence[int] | None) -> tuple[int, ...]:
    """`eos` as a tuple of ids; () for None (sequences then end at their
    length limit only). An id outside the vocabulary (e.g. -1) is never
    chosen: the sequences it would end run to their limit."""
    if eos is None:
        return ()
    ids = (eos,) if isinstance(eos, (int, np.integer)) else tuple(eos)
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise pf.ProgramError(f"an end-of-sequence id must be an integer, got {i!r}")
    return tuple(int(i) for i in ids)


def is_eos(token: pf.TensorLike, ids: tuple[int, ...]) -> pf.TensorLike | None:
    """Whether `token` is one of `ids` (None when there are none)."""
    hit = None
    for i in ids:
        hit = token.eq(i) if hit is None else hit | token.eq(i)
    return hit


def check_positions(config: DecoderConfig, length: int, what: str) -> None:
    """Learned position embeddings have max_positions rows: a program whose
    sequences are longer would read past the table."""
    if config.positions == "learned" and length > config.max_positions:
        raise pf.ProgramError(
            f"{what} is {length} positions, but the model's learned position table has "
            f"{config.max_positions} (max_positions)",
            hint="shorten the prompts or the completions",
        )
