"""Operators that exist for the gradients of others: the transposes of
gathers, slices and broadcasts. They are ordinary operators (an OpSpec and
a body) and can be used directly, but autodiff (pdg.autodiff) is their main
user: `take`'s gradient scatters with `index_add`, a slice read along a dim
is transposed with `pad_front` and `diagonal_sum`, and so on.
"""

from __future__ import annotations

from collections.abc import Sequence

from .body import Body, Val, scalar_type
from .dtypes import TensorType, is_float, is_int
from .errors import ProgramError
from .ops import ELEMENTWISE, OpSpec, _axes, _make, constant, elementwise
from .tensor import OpDef, RecurrentTensor, TensorLike


def _zero(r: Body, dtype: str) -> Val:
    return r.const_scalar(0.0 if is_float(dtype) else 0, dtype)


def _accumulate(r: Body, value: Val, acc: Val, dtype: str) -> Val:
    add = "arith.addf" if is_float(dtype) else "arith.addi"
    return r.emit(f"{add} {value.name}, {acc.name} : {value.type}", value.type)


def _all_dims(rank: int) -> str:
    return ", ".join(f"d{i}" for i in range(rank))


def _static(x: TensorLike, what: str) -> None:
    if any(d is None for d in x.shape):
        raise ProgramError(f"{what} needs a tensor of static shape, got {x.type.mlir()}")


def broadcast_like(x: TensorLike, like: TensorLike) -> RecurrentTensor:
    """`x` broadcast (NumPy rules) to the shape of `like`; `like`'s values
    are not read, only its sizes (which may be symbolic)."""
    if x.dtype != like.dtype:
        x = x.astype(like.dtype)
    return elementwise("broadcast", [x, like], None, _first)


def over_domain(x: TensorLike, domain: Sequence) -> TensorLike:
    """`x` defined at every point of `domain` (a superset of x's dims): x
    itself when it already is, else a copy repeated along the dims x does
    not vary over."""
    program = x.program
    dims = program.ordered_dims({d.name for d in domain} | {d.name for d in x.domain})
    if len(dims) == len(x.domain):
        return x
    attrs = {"fn": _first, "slots": (("arg", 0),), "name": "copy"}
    return RecurrentTensor(program, dims, x.type, OpDef(ELEMENTWISE, [x.operand()], attrs))


def _first(r: Body, scalars, kinds) -> Val:
    return scalars[0]


def _emit_expand_to(body: Body, args, type_: TensorType, attrs) -> Val:
    x, like = args
    axes = attrs["axes"]
    sizes = [body.dim_size(like, a) for a, d in enumerate(type_.shape) if d is None]
    init = body.empty(type_, sizes)
    x_map = ", ".join(f"d{a}" for a in range(type_.rank) if a not in axes)
    return body.generic(
        [(x, x_map)],
        [(init, _all_dims(type_.rank))],
        ["parallel"] * type_.rank,
        lambda r, ins, outs: [ins[0]],
    )[0]


EXPAND_TO = OpSpec("expand_to", _emit_expand_to)


def expand_to(x: TensorLike, like: TensorLike, axes) -> RecurrentTensor:
    """`x` repeated along `axes` of `like` (the transpose of a sum over
    them): x's dims are like's other dims, in order. Sizes come from `like`,
    whose values are not read."""
    axes = tuple(sorted(axes))
    kept = tuple(d for a, d in enumerate(like.shape) if a not in axes)
    if x.ndim != len(kept) or any(
        a is not None and b is not None and a != b for a, b in zip(x.shape, kept, strict=True)
    ):
        raise ProgramError(f"expand_to(): {x.shape} is not {like.shape} without axes {axes}")
    if x.dtype != like.dtype:
        x = x.astype(like.dtype)
    return _make(EXPAND_TO, [x, like], like.type, axes=axes)


# ---------------------------------------------------------------------------
# pad_front: a slice of symbolic length, aligned to the end of a static frame
# ---------------------------------------------------------------------------


def _emit_pad_front(body: Body, args, type_: TensorType, attrs) -> Val:
    (x,) = args
    size = attrs["size"]
    init = body.empty(type_, [])
    n = body.dim_size(x, 0)
    frame = body.const_index(size)
    offset = body.emit(f"arith.subi {frame.name}, {n.name} : index", "index")
    elem = scalar_type(type_.dtype)

    def region(r: Body, ins, outs):
        i = r.emit("linalg.index 0 : index", "index")
        j = r.emit(f"arith.subi {i.name}, {offset.name} : index", "index")
        zero_i = r.const_index(0)
        inside = r.emit(f"arith.cmpi sge, {j.name}, {zero_i.name} : index", "i1")
        row = r.emit(f"arith.select {inside.name}, {j.name}, {zero_i.name} : index", "index")
        rest = [r.emit(f"linalg.index {a} : index", "index") for a in range(1, type_.rank)]
        coords = ", ".join(c.name for c in [row, *rest])
        v = r.emit(f"tensor.extract {x.name}[{coords}] : {x.tensor.mlir()}", elem)
        zero = _zero(r, type_.dtype)
        return [r.emit(f"arith.select {inside.name}, {v.name}, {zero.name} : {elem}", elem)]

    return body.generic([], [(init, _all_dims(type_.rank))], ["parallel"] * type_.rank, region)[0]


PAD_FRONT = OpSpec("pad_front", _emit_pad_front)


def pad_front(x: TensorLike, size: int) -> RecurrentTensor:
    """x of shape (n, ...) with n <= size, as (size, ...): zeros first, x
    last. Row j of x lands at size - n + j."""
    if x.ndim == 0 or any(d is None for d in x.shape[1:]):
        raise ProgramError("pad_front() needs a tensor (n, ...) whose other sizes are static")
    if x.shape[0] is not None and x.shape[0] > size:
        raise ProgramError(f"pad_front(): {x.shape[0]} rows do not fit in {size}")
    return _make(PAD_FRONT, [x], TensorType((size, *x.shape[1:]), x.dtype), size=size)


# ---------------------------------------------------------------------------
# diagonal_sum: sum over i of x[i, offset - i]; diagonal: the terms apart
# ---------------------------------------------------------------------------


def _emit_diagonal(body: Body, args, type_: TensorType, attrs) -> Val:
    """x[i, offset - i, ...] for each i (0 where offset - i is outside the
    second dim), summed over i unless attrs["rows"]."""
    x, off = args
    rows = attrs.get("rows", False)
    rank = x.tensor.rank
    width = x.tensor.shape[1]
    sizes = [body.dim_size(x, 0)] if rows and x.tensor.shape[0] is None else []
    init = body.filled(type_, sizes, 0.0 if is_float(type_.dtype) else 0)
    o64 = body.emit(f"tensor.extract {off.name}[] : {off.tensor.mlir()}", "i64")
    offset = body.emit(f"arith.index_cast {o64.name} : i64 to index", "index")
    elem = scalar_type(type_.dtype)
    # loop dims: d0 = i, d1.. = the trailing dims of x
    loop_rank = rank - 1
    x_map = ", ".join(["d0", "0", *(f"d{a}" for a in range(1, loop_rank))])
    out_map = ", ".join(f"d{a}" for a in range(0 if rows else 1, loop_rank))

    def region(r: Body, ins, outs):
        i = r.emit("linalg.index 0 : index", "index")
        j = r.emit(f"arith.subi {offset.name}, {i.name} : index", "index")
        zero_i = r.const_index(0)
        w = r.const_index(width)
        lo = r.emit(f"arith.cmpi sge, {j.name}, {zero_i.name} : index", "i1")
        hi = r.emit(f"arith.cmpi slt, {j.name}, {w.name} : index", "i1")
        inside = r.emit(f"arith.andi {lo.name}, {hi.name} : i1", "i1")
        col = r.emit(f"arith.select {inside.name}, {j.name}, {zero_i.name} : index", "index")
        rest = [r.emit(f"linalg.index {a} : index", "index") for a in range(1, loop_rank)]
        coords = ", ".join(c.name for c in [i, col, *rest])
        v = r.emit(f"tensor.extract {x.name}[{coords}] : {x.tensor.mlir()}", elem)
        picked = r.emit(
            f"arith.select {inside.name}, {v.name}, {_zero(r, type_.dtype).name} : {elem}", elem
        )
        return [picked if rows else _accumulate(r, picked, outs[0], type_.dtype)]

    iterators = ["parallel" if rows else "reduction"] + ["parallel"] * (loop_rank - 1)
    return body.generic([(x, x_map)], [(init, out_map)], iterators, region)[0]


DIAGONAL_SUM = OpSpec("diagonal_sum", _emit_diagonal)
DIAGONAL = OpSpec("diagonal", _emit_diagonal)


def _check_diagonal(x: TensorLike, offset: TensorLike, what: str) -> None:
    if x.ndim < 2 or x.shape[1] is None or any(d is None for d in x.shape[2:]):
        raise ProgramError(f"{what}() needs a tensor (n, w, ...) with static w and rest")
    if offset.dtype != "i64" or offset.shape:
        raise ProgramError(f"{what}() needs an i64 scalar offset")


def diagonal_sum(x: TensorLike, offset: TensorLike) -> RecurrentTensor:
    """For x of shape (n, w, ...): the sum over i of x[i, offset - i], the
    terms with offset - i outside [0, w) left out. `offset` is an i64
    scalar tensor."""
    _check_diagonal(x, offset, "diagonal_sum")
    return _make(DIAGONAL_SUM, [x, offset], TensorType(tuple(x.shape[2:]), x.dtype))


def diagonal(x: TensorLike, offset: TensorLike) -> RecurrentTensor:
    """For x of shape (n, w, ...): the (n, ...) tensor of rows x[i, offset -
    i], zeros where offset - i is outside [0, w)."""
    _check_diagonal(x, offset, "diagonal")
    shape = (x.shape[0], *x.shape[2:])
    return _make(DIAGONAL, [x, offset], TensorType(shape, x.dtype), rows=True)


# ---------------------------------------------------------------------------
# index_add: the transpose of take
# ---------------------------------------------------------------------------


def _emit_index_add(body: Body, args, type_: TensorType, attrs) -> Val:
    g, idx = args
    axis = attrs["axis"]
    i_rank = idx.tensor.rank
    # The table's dynamic dims are the values' (those after `axis` follow
    # the indices' dims in the values).
    sizes = [
        body.dim_size(g, a if a < axis else a + i_rank - 1)
        for a, d in enumerate(type_.shape)
        if d is None
    ]
    init = body.filled(type_, sizes, 0.0 if is_float(type_.dtype) else 0)
    elem = scalar_type(type_.dtype)
    # loop dims: the output's dims, then one reduction dim per index dim
    out_rank = type_.rank
    red = [f"d{out_rank + a}" for a in range(i_rank)]
    out_dims = [f"d{a}" for a in range(out_rank)]
    g_map = ", ".join(out_dims[:axis] + red + out_dims[axis + 1 :])
    idx_map = ", ".join(red)

    def region(r: Body, ins, outs):
        v = r.emit(f"linalg.index {axis} : index", "index")
        v64 = r.emit(f"arith.index_cast {v.name} : index to i64", "i64")
        ix = ins[1]
        if ix.type != "i64":
            ix = r.emit(f"arith.extsi {ix.name} : {ix.type} to i64", "i64")
        hit = r.emit(f"arith.cmpi eq, {ix.name}, {v64.name} : i64", "i1")
        picked = r.emit(
            f"arith.select {hit.name}, {ins[0].name}, {_zero(r, type_.dtype).name} : {elem}", elem
        )
        return [_accumulate(r, picked, outs[0], type_.dtype)]

    iterators = ["parallel"] * out_rank + ["reduction"] * i_rank
    return body.generic(
        [(g, g_map), (idx, idx_map)], [(init, _all_dims(out_rank))], iterators, region
    )[0]


INDEX_ADD = OpSpec("index_add", _emit_index_add)


def index_add(values: TensorLike, indices: TensorLike, size: int, axis: int = 0) -> RecurrentTensor:
    """The transpose of take(table, indices, axis): a zero table with `size`
    rows along `axis`, each row the sum of the `values` whose index names it."""
    if not is_int(indices.dtype):
        raise ProgramError("index_add() needs integer indices")
    i_rank = indices.ndim
    if values.ndim < i_rank:
        raise ProgramError("index_add() needs values of shape (..., *indices.shape, ...)")
    (ax,) = _axes(axis, values.ndim - i_rank + 1)
    shape = (*values.shape[:ax], size, *values.shape[ax + i_rank :])
    return _make(INDEX_ADD, [values, indices], TensorType(shape, values.dtype), axis=ax)


# ---------------------------------------------------------------------------
# slice_axis: a static range along one axis (the transpose of concat)
# ---------------------------------------------------------------------------


def _emit_slice_axis(body: Body, args, type_: TensorType, attrs) -> Val:
    (x,) = args
    axis, start = attrs["axis"], attrs["start"]
    offsets = ", ".join(str(start if a == axis else 0) for a in range(type_.rank))
    sizes = ", ".join(str(d) for d in type_.shape)
    strides = ", ".join("1" for _ in range(type_.rank))
    return body.emit(
        f"tensor.extract_slice {x.name}[{offsets}] [{sizes}] [{strides}] : "
        f"{x.tensor.mlir()} to {type_.mlir()}",
        type_,
    )


SLICE_AXIS = OpSpec("slice_axis", _emit_slice_axis)


def slice_axis(x: TensorLike, axis: int, start: int, size: int) -> RecurrentTensor:
    """x[..., start : start + size, ...] along `axis` (static sizes)."""
    _static(x, "slice_axis()")
    (ax,) = _axes(axis, x.ndim)
    if start < 0 or size < 1 or start + size > x.shape[ax]:
        raise ProgramError(f"slice {start}:{start + size} is outside axis {ax} of {x.shape}")
    shape = tuple(size if a == ax else d for a, d in enumerate(x.shape))
    return _make(SLICE_AXIS, [x], TensorType(shape, x.dtype), axis=ax, start=start)


def zeros(program, shape, dtype: str, domain: Sequence = ()) -> RecurrentTensor:
    """Zeros of a static shape at every point of `domain`."""
    return over_domain(constant(program, 0.0 if is_float(dtype) else 0, shape, dtype), domain)


__all__ = [
    "broadcast_like",
    "diagonal_sum",
    "expand_to",
    "index_add",
    "over_domain",
    "pad_front",
    "slice_axis",
    "zeros",
]
