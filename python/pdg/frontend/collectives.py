"""Collectives: the values of every rank of an MPI run, combined.

A worker dim (`w = prog.dim("w", world="W")`) has one point per rank, and a
value over it has each point on its rank only. These operators are the one
way a rank sees the others' points. The first three give a value over the
input's other dims, the same on every rank:

    g_local = ...                               # over [w]: this rank's gradient
    g = pdg.all_reduce(g_local, over=w)         # over []: the sum of every rank's
    top = pdg.all_reduce(score, over=w, op="max")
    rows = pdg.all_gather(x, over=w)            # (W, *x.shape) per point
    start = pdg.broadcast(w0, over=w, root=0)   # rank 0's point, on every rank

The others give each rank a point of its own, over the input's domain:

    mine = pdg.reduce_scatter(g_blocks, over=w) # block `rank` of the sum over ranks
    prev = pdg.shift(act, over=w, by=1)         # rank r gets rank r - 1's point

The interpreter runs every rank's points in one process (W is a symbol like
any other); a compiled program runs one rank per process (pdg.runtime's
`run(..., comm=...)`, docs/parallel.md).
"""

from __future__ import annotations

from . import ops
from .dtypes import TensorType, is_float, is_int
from .errors import ProgramError
from .tensor import CollectiveDef, Dim, RecurrentTensor, TensorLike, View

REDUCTIONS = ("sum", "max")


def all_reduce(x: TensorLike, over: Dim, op: str = "sum") -> RecurrentTensor:
    """The sum (or elementwise maximum, `op="max"`) of x's points over the
    ranks of worker dim `over`, at each point of x's other dims."""
    if op not in REDUCTIONS:
        raise ProgramError(
            f"all_reduce op must be one of {', '.join(map(repr, REDUCTIONS))}, got {op!r}"
        )
    x = _checked(x, over, "all_reduce")
    if not (is_float(x.dtype) or (is_int(x.dtype) and x.dtype != "i1")):
        raise ProgramError(
            f"all_reduce takes floats or integers, got {x.dtype}",
            hint="cast it first, e.g. x.astype('f32')",
        )
    return _make(x, over, CollectiveDef("all_reduce", x.operand(), over, reduction=op), x.type)


def all_gather(x: TensorLike, over: Dim) -> RecurrentTensor:
    """Every rank's point of x, stacked along a new leading dim of size W
    (rank 0 first), at each point of x's other dims."""
    x = _checked(x, over, "all_gather")
    point = TensorType((None, *x.shape), x.dtype)
    return _make(x, over, CollectiveDef("all_gather", x.operand(), over), point)


def broadcast(x: TensorLike, over: Dim, root: int = 0) -> RecurrentTensor:
    """Rank `root`'s point of x, on every rank, at each point of x's other dims."""
    if not isinstance(root, int) or isinstance(root, bool) or root < 0:
        raise ProgramError(f"broadcast root must be a rank (an int >= 0), got {root!r}")
    x = _checked(x, over, "broadcast")
    if over.max is not None and root >= over.max:
        raise ProgramError(
            f"broadcast root {root} is past the {over.max} ranks dim '{over.name}' allows"
        )
    return _make(x, over, CollectiveDef("broadcast", x.operand(), over, root=root), x.type)


def reduce_scatter(x: TensorLike, over: Dim, op: str = "sum") -> RecurrentTensor:
    """Each rank's block of the sum (or elementwise maximum, `op="max"`) of
    x's points over the ranks of worker dim `over`: x's points have a
    leading dim of W blocks, and rank r's point of the result is block r.
    The result keeps x's domain (one point per rank)."""
    if op not in REDUCTIONS:
        raise ProgramError(
            f"reduce_scatter op must be one of {', '.join(map(repr, REDUCTIONS))}, got {op!r}"
        )
    x = _checked(x, over, "reduce_scatter")
    if not x.shape:
        raise ProgramError(
            "reduce_scatter needs points with a leading dim of W blocks (one per rank), "
            "got a scalar point",
            hint="stack the blocks along a leading dim, e.g. x.reshape((W, -1))",
        )
    if x.shape[0] is not None and over.max is not None and x.shape[0] > over.max:
        raise ProgramError(
            f"reduce_scatter takes one block per rank, but the points have {x.shape[0]} "
            f"blocks and dim '{over.name}' allows at most {over.max} ranks"
        )
    if not (is_float(x.dtype) or (is_int(x.dtype) and x.dtype != "i1")):
        raise ProgramError(
            f"reduce_scatter takes floats or integers, got {x.dtype}",
            hint="cast it first, e.g. x.astype('f32')",
        )
    point = TensorType(tuple(x.shape[1:]), x.dtype)
    definition = CollectiveDef("reduce_scatter", x.operand(), over, reduction=op)
    return RecurrentTensor(x.program, x.domain, point, definition)


def shift(x: TensorLike, over: Dim, by: int = 1) -> RecurrentTensor:
    """Rank r's point of the result is rank (r - by) mod W's point of x: with
    by=1 each rank passes its point to the next, the last to rank 0 (a
    pipeline stage's hand-off, one step of a ring). The result keeps x's
    domain and point type."""
    if not isinstance(by, int) or isinstance(by, bool):
        raise ProgramError(f"shift by must be an int (a number of ranks), got {by!r}")
    x = _checked(x, over, "shift")
    definition = CollectiveDef("shift", x.operand(), over, by=by)
    return RecurrentTensor(x.program, x.domain, x.type, definition)


def _checked(x: TensorLike, over: Dim, what: str) -> RecurrentTensor:
    if not isinstance(x, TensorLike):
        raise ProgramError(f"{what} needs a tensor, got {type(x).__name__}")
    if not isinstance(over, Dim) or over.program is not x.program:
        raise ProgramError(f"{what} needs over= a dim of the tensor's program, got {over!r}")
    if not over.worker:
        raise ProgramError(
            f"{what} communicates over dim '{over.name}', which is not a worker dim",
            hint=f"declare it with prog.dim('{over.name}', world='W')",
        )
    if not any(d is over for d in x.domain):
        dims = ", ".join(d.name for d in x.domain)
        raise ProgramError(
            f"{what} combines the ranks' points of a value over '{over.name}', but the "
            f"value is over [{dims}]",
            hint="only values computed on each rank (over the worker dim) need combining",
        )
    if isinstance(x, View) or not isinstance(x, RecurrentTensor):
        x = ops.cast_to(x, x.dtype)  # a view becomes a value of its own
    return x


def _make(x: RecurrentTensor, over: Dim, definition: CollectiveDef, point: TensorType):
    domain = tuple(d for d in x.domain if d is not over)
    return RecurrentTensor(x.program, domain, point, definition)
