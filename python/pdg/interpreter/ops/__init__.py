"""Handlers for the ops of node bodies, one table per dialect, merged here.

A handler is `fn(executor, op, operand_values) -> result value(s)`; see
`body.BodyOp` for what it can read from the op.
"""

from __future__ import annotations

from ..body import Handler
from . import affine_ops, arith, linalg, math, pdg_ops, scf, tensor

HANDLERS: dict[str, Handler] = {}
for _module in (arith, math, tensor, linalg, scf, affine_ops, pdg_ops):
    HANDLERS.update(_module.HANDLERS)
