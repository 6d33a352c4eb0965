"""pdg ops inside a node body: the current point's coordinates."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ..body import BodyOp, Executor
from .table import HandlerTable

HANDLERS = HandlerTable()


@HANDLERS.register("pdg.point")
def point(ex: Executor, op: BodyOp, args: list):
    dim = op.memo("dim", lambda: ir.FlatSymbolRefAttr(op.attr("dim")).value)
    return np.int64(ex.point[dim])
