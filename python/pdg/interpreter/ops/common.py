"""Helpers shared by the dialect handler modules."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..body import BodyOp
from ..errors import InterpreterError
from ..types import TensorType, is_dynamic


def segments(op: BodyOp, args: list) -> list[list]:
    """Operands split by `operandSegmentSizes` (ins/outs, offsets/sizes/...)."""
    sizes = op.memo("segments", lambda: [int(x) for x in op.attr("operandSegmentSizes")])
    out, start = [], 0
    for n in sizes:
        out.append(args[start : start + n])
        start += n
    return out


def static_list(op: BodyOp, name: str) -> list[int]:
    return op.memo(name, lambda: [int(x) for x in op.attr(name)])


def to_int(x) -> int:
    arr = np.asarray(x)
    if arr.ndim != 0:
        raise InterpreterError(
            "a size, offset or index must be one value here, but it varies across the "
            "iteration space of the enclosing linalg op"
        )
    return int(arr)


def mixed(static: Sequence[int], dynamic: Sequence) -> list[int]:
    """Static values with their dynamic (`?`) entries taken from operands, in order."""
    it = iter(dynamic)
    return [to_int(next(it)) if is_dynamic(s) else int(s) for s in static]


def concrete_shape(t: TensorType, dynamic: Sequence) -> tuple[int, ...]:
    """`t`'s shape with each `?` given, in order, by a dynamic-size operand."""
    it = iter(dynamic)
    shape = tuple(to_int(next(it)) if s is None else s for s in t.shape)
    if any(s < 0 for s in shape):
        raise InterpreterError(f"negative size in shape {shape}")
    return shape


def filled(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A tensor whose contents are undefined (tensor.empty): NaN for floats,
    so that reading it by mistake shows up, zero for integers."""
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype)
    return np.zeros(shape, dtype)


def index_grids(shape: Sequence[int]) -> list[np.ndarray]:
    """One int64 array per dim, varying along that dim only (broadcastable)."""
    n = len(shape)
    return [
        np.arange(s, dtype=np.int64).reshape([s if i == d else 1 for i in range(n)])
        for d, s in enumerate(shape)
    ]
