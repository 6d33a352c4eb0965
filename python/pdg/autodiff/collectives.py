"""The vector-Jacobian products of the collectives (frontend/collectives.py).

A collective's input is over the worker dim w and its result is not: the
result is the same on every rank, and so is its adjoint g (each rank
computes it alike). So:

    y = all_reduce(x, over=w)       dx[w] = g            on every rank
    y = broadcast(x, over=w, root)  dx[w] = g if w == root else 0

No communication. A shift keeps the worker dim, and its adjoint is the
shift back: rank r's point went to rank r + k, whose adjoint returns:

    y = shift(x, over=w, by=k)      dx = shift(g, over=w, by=-k)
 The other direction, a node over w reading a value that
is not over w (Megatron's "f": the replicated input of a column-split
product), sums its contributions over the ranks; transpose.py makes that
sum an all_reduce.
"""

from __future__ import annotations

from pdg.frontend.adjoint_ops import over_domain, zeros
from pdg.frontend.collectives import shift
from pdg.frontend.tensor import CollectiveDef, RecurrentTensor, TensorLike


def differentiable_collective(d: CollectiveDef) -> bool:
    """Whether the rule below covers it: an elementwise maximum picks a rank
    per element and a gather's adjoint reads its own row, neither built."""
    return (d.op == "all_reduce" and d.reduction == "sum") or d.op in ("broadcast", "shift")


def collective_vjp(node: RecurrentTensor, g: TensorLike) -> TensorLike:
    """The adjoint of the collective `node`'s input, over the input's domain."""
    d = node.definition
    x = d.operand.source
    if d.op == "all_reduce":
        return over_domain(g, x.domain)
    if d.op == "shift":
        return shift(g, over=d.over, by=-d.by)
    part = x.program.recurrent(x.shape, x.dtype, x.domain)
    part[d.over == d.root] = g
    part[...] = zeros(x.program, x.shape, x.dtype)
    return part
