"""Values that need no store per point: those read only by a sum over
their parallel dims.

A weight's gradient per completion (`g[p, i, g]`, a contraction over that
completion's steps) is read by one node only, the sum over every prompt
and completion `s[i] = sum g[0 : P, i, 0 : G]`. Keeping every g[p, i, g]
costs P * G copies of the weight and a second pass over them. Instead the
points are cut into a few chunks of consecutive points (a fixed number,
not one per thread, so that the sum's bits do not depend on the thread
count), each chunk adds its points into its own partial sum, and the sum's
node adds the few partials up: the store is `partial`, one point per chunk
(the lowering's partials.py).

The sum is recognized in the reader's body: a zero fill, then one
linalg.generic that adds its only input into it, reducing exactly the
leading dims (the sliced ones) and keeping the point's."""

from __future__ import annotations

from mlir import ir

from .graph import Graph, Value

FLOATS = ("f16", "bf16", "f32", "f64")


def partial_sums(graph: Graph, roles: dict[str, str]) -> dict[int, Value]:
    """id(value) -> the sum that is its only reader, for each value whose
    store can be partial sums."""
    readers: dict[int, list] = {id(v): [] for v in graph.values}
    for read in graph.reads:
        readers[id(read.producer)].append(read)
    ends = {d.until for d in graph.dims.values() if d.until}
    found = {}
    for v in graph.values:
        reads = readers[id(v)]
        if v.kind != "node" or v.is_output or v.name in ends or len(reads) != 1:
            continue
        total = reads[0].consumer
        summed = summed_dims(graph, roles, reads[0])
        if summed and body_is_sum(total.op.regions[0].blocks[0], len(summed)):
            found[id(v)] = total
    return found


def summed_dims(graph: Graph, roles: dict[str, str], read) -> list[str]:
    """The dims `read` sums its producer over, when the read takes all of
    them (`0 : bound`), they are parallel, and it takes the other dims at
    the reader's own coordinates, which are all sequential or the worker
    dim (fixed while the producer's points run); [] otherwise."""
    v, total = read.producer, read.consumer
    if (
        total.kind != "node"
        or len(total.reads) != 1
        or len(total.conditions) != 1
        or any(c != "0 >= 0" for c in total.conditions[0])  # only a default case
        or v.element not in FLOATS
        or None in v.shape
        or (total.shape, total.element) != (v.shape, v.element)
        or not set(total.domain) <= set(v.domain)
        # The sum's own dims are fixed while the summed points run:
        # sequential ones, or the worker dim (one point per rank, so a
        # rank's partial sum is of its own points: pdg-split-over-workers).
        or any(roles[d] != "sequential" and not graph.dims[d].worker for d in total.domain)
        or any(graph.dims[d].kind == "dynamic" for d in v.domain)
    ):
        return []
    summed = []
    for d, entry in zip(v.domain, read.entries, strict=True):
        if d in total.domain:
            if entry != ("point", d):
                return []
        elif entry == ("slice", ["0"], [graph.dims[d].bound]) and roles[d] == "parallel":
            summed.append(d)
        else:
            return []
    return summed


def body_is_sum(block: ir.Block, leading: int) -> bool:
    """Whether `block` (a node's case, or its outlined func, whose other
    arguments are the point's coordinates) returns the sum of its first
    argument over its `leading` dims, from zero."""
    ops = [op.operation for op in block.operations]
    if len(ops) < 2 or not len(block.arguments):
        return False
    *work, end = ops
    generics = [op for op in work if op.name == "linalg.generic"]
    fills = [op for op in work if op.name == "linalg.fill"]
    allowed = {"arith.constant", "tensor.empty", "linalg.fill", "linalg.generic"}
    if len(generics) != 1 or len(fills) != 1 or any(op.name not in allowed for op in work):
        return False
    generic, fill = generics[0], fills[0]
    if len(end.operands) != 1 or end.operands[0] != generic.results[0]:
        return False
    if not _is_zero(fill.operands[0]) or len(generic.operands) != 2:
        return False
    if generic.operands[0] != block.arguments[0] or generic.operands[1] != fill.results[0]:
        return False
    kinds = [str(a) for a in ir.ArrayAttr(generic.attributes["iterator_types"])]
    rank = len(kinds)
    if kinds != ["#linalg.iterator_type<reduction>"] * leading + [
        "#linalg.iterator_type<parallel>"
    ] * (rank - leading):
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if [_dims_of(m) for m in maps] != [list(range(rank)), list(range(leading, rank))]:
        return False
    inner = generic.regions[0].blocks[0]
    body = [op.operation for op in inner.operations]
    if len(body) != 2 or body[0].name != "arith.addf":
        return False
    add, yielded = body
    a, b = inner.arguments
    x, y = add.operands
    adds_both = (x == a and y == b) or (x == b and y == a)
    return adds_both and len(yielded.operands) == 1 and yielded.operands[0] == add.results[0]


def _dims_of(amap: ir.AffineMap) -> list[int] | None:
    """The positions of a map's results when each is a plain dim."""
    out = []
    for e in amap.results:
        e = e.maybe_downcast()
        if not isinstance(e, ir.AffineDimExpr):
            return None
        out.append(e.position)
    return out


def _is_zero(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return False
    try:
        return ir.FloatAttr(owner.attributes["value"]).value == 0.0
    except ValueError:  # not a float constant
        return False
