"""scf.if and scf.for with tensor semantics (iter_args carried as values)."""

from __future__ import annotations

import numpy as np

from ..body import BodyOp, Executor
from ..errors import InterpreterError
from .common import to_int
from .table import HandlerTable

HANDLERS = HandlerTable()


@HANDLERS.register("scf.if")
def if_(ex: Executor, op: BodyOp, args: list):
    cond = np.asarray(args[0])
    if cond.ndim != 0:
        raise InterpreterError(
            "scf.if on a condition that varies across a linalg op's iteration space",
            hint="use arith.select inside linalg regions",
        )
    if bool(cond):
        results = ex.run(op.regions[0], [])
    elif len(op.regions) > 1 and op.regions[1].terminator:
        results = ex.run(op.regions[1], [])
    else:
        results = []
    return results[0] if len(op.results) == 1 else results


@HANDLERS.register("scf.for")
def for_(ex: Executor, op: BodyOp, args: list):
    lb, ub, step = (to_int(a) for a in args[:3])
    if step <= 0:
        raise InterpreterError(f"scf.for with step {step}: the step must be positive")
    carried = list(args[3:])
    body = op.regions[0]
    iv_type = body.arg_types[0]
    dtype = getattr(iv_type, "dtype", np.dtype(np.int64))
    for i in range(lb, ub, step):
        carried = ex.run(body, [np.asarray(i, dtype=dtype), *carried])
    return carried[0] if len(op.results) == 1 else carried
