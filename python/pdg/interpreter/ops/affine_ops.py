"""affine.apply, affine.min and affine.max on index values."""

from __future__ import annotations

import numpy as np

from ..affine import map_from_attr
from ..body import BodyOp, Executor
from .table import HandlerTable

HANDLERS = HandlerTable()


def _results(op: BodyOp, args: list) -> list:
    m = op.memo("map", lambda: map_from_attr(op.attr("map")))
    values = [np.asarray(a, dtype=np.int64) for a in args]
    return [np.asarray(r, dtype=np.int64) for r in m.eval(values[: m.n_dims], values[m.n_dims :])]


@HANDLERS.register("affine.apply")
def apply(ex: Executor, op: BodyOp, args: list):
    return _results(op, args)[0]


@HANDLERS.register("affine.min")
def min_(ex: Executor, op: BodyOp, args: list):
    return np.minimum.reduce(np.broadcast_arrays(*_results(op, args)))


@HANDLERS.register("affine.max")
def max_(ex: Executor, op: BodyOp, args: list):
    return np.maximum.reduce(np.broadcast_arrays(*_results(op, args)))
