"""The pdg frontend: RL fine-tuning programs as recurrence equations.

    import pdg.frontend as pdg

    prog = pdg.Program("decode")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", dynamic="T", max=256)
    ...
    k_window = k[b, pdg.max(0, t - 63) : t + 1]

Dims index tensors (`x[t - 1]`, slices add a symbolic spatial dim),
operators build new recurrent tensors, and `Program.build()` gives a verified
pdg.graph. Importing this package needs NumPy only; `build()` needs MLIR.
Gradients are pdg.autodiff's (`from pdg.autodiff import grad`), which
builds on this package, never the other way.
"""

from . import operators as _operators  # noqa: F401  (installs tensor operators)
from .collectives import all_gather, all_reduce, broadcast, reduce_scatter, shift
from .dtypes import TensorType
from .errors import ProgramError, SourceLoc
from .index import Condition, IndexExpr, max, min
from .ops import (
    abs,
    argmax,
    concat,
    cos,
    einsum,
    erf,
    exp,
    gelu,
    log,
    log1p,
    log_softmax,
    logical_not,
    matmul,
    maximum,
    mean,
    minimum,
    permute,
    relu,
    reshape,
    rsqrt,
    sample,
    sigmoid,
    silu,
    sin,
    softmax,
    sqrt,
    stop_gradient,
    sum,
    take,
    tanh,
    transpose,
    where,
)
from .program import Program
from .tensor import Dim, RecurrentTensor, TensorLike, View

__all__ = [
    "Condition",
    "Dim",
    "IndexExpr",
    "Program",
    "ProgramError",
    "RecurrentTensor",
    "SourceLoc",
    "TensorLike",
    "TensorType",
    "View",
    "abs",
    "all_gather",
    "all_reduce",
    "argmax",
    "broadcast",
    "concat",
    "cos",
    "einsum",
    "erf",
    "exp",
    "gelu",
    "log",
    "log1p",
    "log_softmax",
    "logical_not",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "permute",
    "reduce_scatter",
    "relu",
    "reshape",
    "rsqrt",
    "sample",
    "shift",
    "sigmoid",
    "silu",
    "sin",
    "softmax",
    "sqrt",
    "stop_gradient",
    "sum",
    "take",
    "tanh",
    "transpose",
    "where",
]
