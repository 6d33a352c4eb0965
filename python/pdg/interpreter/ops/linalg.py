"""linalg: generic, reduce, map, named structured ops, softmax.

Named structured ops carry their body as a region (the parser fills it in),
so they run through the same machinery as linalg.generic
(`linalg_generic.run_structured`); only their indexing maps are needed,
from their `indexing_maps` attribute or, for the ops without one, from the
table below. Their regions hold the exact scalar semantics, casts included.
transpose, broadcast and softmax are plain NumPy.
"""

from __future__ import annotations

import numpy as np

from ..affine import Dim, Map, map_from_attr
from ..body import BodyOp, Executor
from ..errors import InterpreterError
from ..linalg_generic import run_structured
from .common import segments, static_list
from .table import HandlerTable

HANDLERS = HandlerTable()


def _map(n: int, *results: int) -> Map:
    return Map(n, 0, tuple(Dim(r) for r in results))


# Maps of named contractions without an `indexing_maps` attribute.
_CONTRACTIONS = {
    "linalg.matvec": [_map(2, 0, 1), _map(2, 1), _map(2, 0)],
    "linalg.vecmat": [_map(2, 1), _map(2, 1, 0), _map(2, 0)],
    "linalg.dot": [_map(1, 0), _map(1, 0), _map(1)],
    "linalg.batch_matvec": [_map(3, 0, 1, 2), _map(3, 0, 2), _map(3, 0, 1)],
    "linalg.batch_vecmat": [_map(3, 0, 2), _map(3, 0, 2, 1), _map(3, 0, 1)],
    "linalg.matmul": [_map(3, 0, 2), _map(3, 2, 1), _map(3, 0, 1)],
    "linalg.batch_matmul": [_map(4, 0, 1, 3), _map(4, 0, 3, 2), _map(4, 0, 1, 2)],
}

# Named elementwise ops: every tensor operand indexed by the identity.
_ELEMENTWISE = {
    "linalg.add",
    "linalg.sub",
    "linalg.mul",
    "linalg.div",
    "linalg.div_unsigned",
    "linalg.max",
    "linalg.min",
    "linalg.powf",
    "linalg.exp",
    "linalg.log",
    "linalg.abs",
    "linalg.ceil",
    "linalg.floor",
    "linalg.negf",
    "linalg.reciprocal",
    "linalg.round",
    "linalg.sqrt",
    "linalg.rsqrt",
    "linalg.square",
    "linalg.tanh",
    "linalg.erf",
    "linalg.select",
    "linalg.copy",
    "linalg.fill",
}


def _identity_maps(operands: list, rank: int) -> list[Map]:
    maps = []
    for a in operands:
        r = np.ndim(a)
        if r == rank:
            maps.append(Map(rank, 0, tuple(Dim(i) for i in range(rank))))
        elif r == 0:
            maps.append(Map(rank, 0, ()))  # a scalar operand, e.g. linalg.fill's value
        else:
            raise InterpreterError(
                f"operand of rank {r} in an elementwise op of rank {rank}",
                hint="named elementwise ops need operands of one shape; broadcast first",
            )
    return maps


def _maps(op: BodyOp, ins: list, outs: list) -> list[Map]:
    attr = op.attr("indexing_maps")
    if attr is not None:
        return op.memo("maps", lambda: [map_from_attr(a) for a in attr])
    if op.name in _CONTRACTIONS:
        return _CONTRACTIONS[op.name]
    if op.name in _ELEMENTWISE or op.name == "linalg.map":
        return _identity_maps(ins + outs, np.ndim(outs[0]))
    raise InterpreterError(f"no indexing maps known for {op.name}")


def _structured(ex: Executor, op: BodyOp, args: list):
    ins, outs = segments(op, args) if op.attr("operandSegmentSizes") else (args[:-1], args[-1:])
    if not op.regions:
        raise InterpreterError(f"{op.name} has no body region")
    results = run_structured(ex, op, _maps(op, ins, outs), ins, outs, op.regions[0])
    return results[0] if len(op.results) == 1 else results


for _name in [
    "linalg.generic",
    "linalg.map",
    "linalg.elementwise",
    "linalg.contract",
    "linalg.batch_reduce_matmul",
    *_CONTRACTIONS,
    *_ELEMENTWISE,
]:
    HANDLERS[_name] = _structured


@HANDLERS.register("linalg.reduce")
def reduce(ex: Executor, op: BodyOp, args: list):
    n = len(args) // 2
    ins, inits = args[:n], args[n:]
    dims = static_list(op, "dimensions")
    rank = np.ndim(ins[0])
    kept = [d for d in range(rank) if d not in dims]
    identity = Map(rank, 0, tuple(Dim(d) for d in range(rank)))
    maps = [identity] * n + [Map(rank, 0, tuple(Dim(d) for d in kept))] * n
    results = run_structured(ex, op, maps, ins, inits, op.regions[0])
    return results[0] if len(op.results) == 1 else results


@HANDLERS.register("linalg.index")
def index(ex: Executor, op: BodyOp, args: list):
    if not ex.lanes:
        raise InterpreterError("linalg.index outside a linalg op's region")
    return ex.lanes[-1].indices[int(op.attr("dim").value)]


@HANDLERS.register("linalg.transpose")
def transpose(ex: Executor, op: BodyOp, args: list):
    return np.transpose(np.asarray(args[0]), static_list(op, "permutation")).copy()


@HANDLERS.register("linalg.broadcast")
def broadcast(ex: Executor, op: BodyOp, args: list):
    src, init = np.asarray(args[0]), np.asarray(args[1])
    added = static_list(op, "dimensions")
    # The input's dims are the output's dims not listed in `dimensions`.
    return np.broadcast_to(np.expand_dims(src, tuple(added)), init.shape).copy()


@HANDLERS.register("linalg.softmax")
def softmax(ex: Executor, op: BodyOp, args: list):
    x = np.asarray(args[0])
    axis = int(op.attr("dimension").value)
    if x.shape[axis] == 0:
        return x.copy()
    # Like the op's decomposition: exp(x - max) / sum, in the element type.
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True, dtype=x.dtype)
