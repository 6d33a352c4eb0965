"""tensor: creation, element and slice access, reshapes, concat, generate, pad.

Tensors are values: every op that "updates" a tensor returns a new array and
never writes its operands (arrays read from other points are read-only).
Reads outside a tensor are errors, never NumPy's negative-index wraparound.
"""

from __future__ import annotations

import numpy as np

from ..body import BodyOp, Executor
from ..errors import InterpreterError
from ..types import TensorType, elem_of
from .common import (
    concrete_shape,
    filled,
    index_grids,
    mixed,
    segments,
    static_list,
    to_int,
)
from .table import HandlerTable

HANDLERS = HandlerTable()


def _result(op: BodyOp, i: int = 0) -> TensorType:
    t = op.result_types[i]
    assert isinstance(t, TensorType)
    return t


@HANDLERS.register("tensor.empty")
def empty(ex: Executor, op: BodyOp, args: list):
    t = _result(op)
    return filled(concrete_shape(t, args), t.elem.dtype)


@HANDLERS.register("tensor.splat")
def splat(ex: Executor, op: BodyOp, args: list):
    t = _result(op)
    value = np.asarray(args[0])
    if value.ndim != 0:
        raise InterpreterError("tensor.splat of a value that varies across lanes")
    return np.full(concrete_shape(t, args[1:]), value, t.elem.dtype)


@HANDLERS.register("tensor.from_elements")
def from_elements(ex: Executor, op: BodyOp, args: list):
    t = _result(op)
    values = [np.asarray(a) for a in args]
    if any(v.ndim != 0 for v in values):
        raise InterpreterError("tensor.from_elements of values that vary across lanes")
    return np.array([v[()] for v in values], dtype=t.elem.dtype).reshape(
        tuple(int(s) for s in t.shape)
    )


def _check_indices(shape: tuple[int, ...], indices: list) -> tuple:
    if len(indices) != len(shape):
        raise InterpreterError(f"{len(indices)} indices for a tensor of rank {len(shape)}")
    out = []
    for d, (i, n) in enumerate(zip(indices, shape, strict=True)):
        i = np.asarray(i)
        if np.any(i < 0) or np.any(i >= n):
            bad = int(i[(i < 0) | (i >= n)].ravel()[0]) if i.ndim else int(i)
            raise InterpreterError(
                f"index {bad} along dim {d} is outside the tensor of shape {shape}",
                hint="indices must satisfy 0 <= index < size",
            )
        out.append(i)
    return tuple(out)


@HANDLERS.register("tensor.extract")
def extract(ex: Executor, op: BodyOp, args: list):
    t = np.asarray(args[0])
    # With array indices (inside a linalg region) this is a NumPy gather.
    return t[_check_indices(t.shape, args[1:])]


@HANDLERS.register("tensor.insert")
def insert(ex: Executor, op: BodyOp, args: list):
    value, dest = np.asarray(args[0]), np.asarray(args[1])
    idx = _check_indices(dest.shape, args[2:])
    if value.ndim != 0 or any(np.ndim(i) for i in idx):
        raise InterpreterError("tensor.insert of values that vary across lanes is not supported")
    out = dest.copy()
    out[tuple(int(i) for i in idx)] = value
    return out


@HANDLERS.register("tensor.dim")
def dim(ex: Executor, op: BodyOp, args: list):
    shape = np.shape(args[0])
    i = to_int(args[1])
    if not 0 <= i < len(shape):
        raise InterpreterError(f"dim {i} of a tensor of rank {len(shape)}")
    return np.int64(shape[i])


@HANDLERS.register("tensor.rank")
def rank(ex: Executor, op: BodyOp, args: list):
    return np.int64(np.ndim(args[0]))


@HANDLERS.register("tensor.cast")
def cast(ex: Executor, op: BodyOp, args: list):
    t = _result(op)
    arr = np.asarray(args[0])
    if not t.matches(arr.shape):
        raise InterpreterError(f"tensor.cast of a tensor of shape {arr.shape} to {t}")
    return arr


# --- slices ------------------------------------------------------------------


def _slice_spec(op: BodyOp, offsets, sizes, strides) -> tuple[list[int], list[int], list[int]]:
    return (
        mixed(static_list(op, "static_offsets"), offsets),
        mixed(static_list(op, "static_sizes"), sizes),
        mixed(static_list(op, "static_strides"), strides),
    )


def _slices(shape: tuple[int, ...], offsets, sizes, strides) -> tuple[slice, ...]:
    if not len(offsets) == len(sizes) == len(strides) == len(shape):
        raise InterpreterError(f"slice of rank {len(sizes)} of a tensor of rank {len(shape)}")
    out = []
    for d, (o, s, st, n) in enumerate(zip(offsets, sizes, strides, shape, strict=True)):
        if s < 0 or st < 1:
            raise InterpreterError(f"size {s} or stride {st} along dim {d} is not supported")
        last = o + (s - 1) * st
        if s > 0 and (o < 0 or last >= n):
            raise InterpreterError(
                f"slice offset {o}, size {s}, stride {st} along dim {d} reads outside the "
                f"tensor of shape {shape}",
                hint="a slice must satisfy 0 <= offset and offset + (size - 1) * stride < size",
            )
        out.append(slice(o, o + s * st, st) if s > 0 else slice(0, 0))
    return tuple(out)


def _rank_reduced_shape(sizes: list[int], t: TensorType) -> tuple[int, ...]:
    """The concrete shape of a (possibly rank-reduced) slice of type `t`:
    `sizes` with some unit dims dropped. Which unit dims are dropped does
    not change the data, only the `?` sizes of `t` need values."""

    def match(i: int, j: int) -> list[int] | None:
        if i == len(sizes):
            return [] if j == t.rank else None
        if j < t.rank and t.shape[j] in (None, sizes[i]):
            rest = match(i + 1, j + 1)
            if rest is not None:
                return [sizes[i], *rest]
        if sizes[i] == 1:
            return match(i + 1, j)
        return None

    shape = match(0, 0)
    if shape is None:
        raise InterpreterError(f"slice sizes {sizes} do not give the result type {t}")
    return tuple(shape)


@HANDLERS.register("tensor.extract_slice")
def extract_slice(ex: Executor, op: BodyOp, args: list):
    (src,), offsets, sizes, strides = segments(op, args)
    src = np.asarray(src)
    offsets, sizes, strides = _slice_spec(op, offsets, sizes, strides)
    part = src[_slices(src.shape, offsets, sizes, strides)]
    return part.reshape(_rank_reduced_shape(sizes, _result(op)))


@HANDLERS.register("tensor.insert_slice")
def insert_slice(ex: Executor, op: BodyOp, args: list):
    (src,), (dest,), offsets, sizes, strides = segments(op, args)
    dest = np.asarray(dest)
    offsets, sizes, strides = _slice_spec(op, offsets, sizes, strides)
    src = np.asarray(src)
    if src.size != int(np.prod(sizes)):
        raise InterpreterError(f"inserting a tensor of shape {src.shape} into a slice of {sizes}")
    out = dest.copy()
    out[_slices(dest.shape, offsets, sizes, strides)] = src.reshape(sizes)
    return out


# --- reshapes ----------------------------------------------------------------


def _reshape(arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if int(np.prod(shape)) != arr.size:
        raise InterpreterError(f"cannot reshape a tensor of shape {arr.shape} to {shape}")
    return arr.reshape(shape)


@HANDLERS.register("tensor.expand_shape")
def expand_shape(ex: Executor, op: BodyOp, args: list):
    shape = mixed(static_list(op, "static_output_shape"), args[1:])
    return _reshape(np.asarray(args[0]), tuple(shape))


@HANDLERS.register("tensor.collapse_shape")
def collapse_shape(ex: Executor, op: BodyOp, args: list):
    groups = op.memo(
        "groups", lambda: [[int(i.value) for i in g] for g in op.attr("reassociation")]
    )
    src = np.asarray(args[0])
    shape = tuple(int(np.prod([src.shape[i] for i in g])) for g in groups)
    return _reshape(src, shape)


@HANDLERS.register("tensor.reshape")
def reshape(ex: Executor, op: BodyOp, args: list):
    shape = tuple(int(s) for s in np.asarray(args[1]).ravel())
    return _reshape(np.asarray(args[0]), shape)


@HANDLERS.register("tensor.concat")
def concat(ex: Executor, op: BodyOp, args: list):
    axis = op.memo("dim", lambda: int(op.attr("dim").value))
    return np.concatenate([np.asarray(a) for a in args], axis=axis)


# --- regions -----------------------------------------------------------------


def _fill_from_region(ex: Executor, op: BodyOp, shape: tuple[int, ...]) -> np.ndarray:
    """Runs a region yielding one element per index, over all indices at once."""
    grids = index_grids(shape)
    (value,) = ex.run_in_lanes(op.regions[0], grids, grids)
    return np.broadcast_to(value, shape)


@HANDLERS.register("tensor.generate")
def generate(ex: Executor, op: BodyOp, args: list):
    t = _result(op)
    shape = concrete_shape(t, args)
    return _fill_from_region(ex, op, shape).astype(t.elem.dtype)


@HANDLERS.register("tensor.pad")
def pad(ex: Executor, op: BodyOp, args: list):
    (src,), low, high = segments(op, args)
    src = np.asarray(src)
    low = mixed(static_list(op, "static_low"), low)
    high = mixed(static_list(op, "static_high"), high)
    if any(x < 0 for x in low + high):
        raise InterpreterError(f"negative padding low={low} high={high} is not supported")
    shape = tuple(lo + n + hi for lo, n, hi in zip(low, src.shape, high, strict=True))
    out = _fill_from_region(ex, op, shape).astype(elem_of(op.result_types[0]).dtype)
    out[tuple(slice(lo, lo + n) for lo, n in zip(low, src.shape, strict=True))] = src
    return out
