"""Partial sums in chunks: the Driver's part for `partial` stores (see
pdg.analysis.partial_sums).

A value with a partial store is read only by a sum over its parallel
dims. Its points, in row-major order, are cut into at most CHUNKS chunks
of consecutive points; each chunk adds its points in order into its own
partial sum, and the sum's node adds the chunks' partials in order
instead of running its body. The chunks are the iterations of a parallel
loop, so the pool's threads share them out; which points are added
together, and in which order, depends only on the number of points, so
every thread count gives the same bits. A point's body writes into the
scratch slot of the thread running it (a thread runs one point at a
time), which is then added into its chunk's partial sum. A chunk of one
point (every chunk, when there are at most CHUNKS points: a training
program's weight gradient over a few microbatches) writes its partial
sum directly, and then no scratch is allocated: at gpt2-124m's GRPO the
scratch was two more copies of every gradient summed this way.

Each chunk zeroes its own partial sum first, inside the parallel loop:
zeroed on the driver's thread before the loop, every chunk's copy of the
value (of each weight's gradient, in a training program) was written by
one thread while the others waited."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from pdg.analysis.partial_sums import body_is_sum
from pdg.passes.registry import PassError

from .buffers import Buffer
from .model import LoweringModel, Node
from .text import MemRef, Writer, subview


def summing_nodes(model: LoweringModel, funcs: dict) -> dict[int, Node]:
    """id(value with a partial store) -> the node summing it, after
    checking that its outlined body is that sum (a hand-written plan could
    say `partial` of anything)."""
    nodes = {id(n.value): n for n in model.nodes}
    found = {}
    for store in model.stores.values():
        if store.kind != "partial":
            continue
        v = store.value
        reads = [r for r in model.graph.reads if r.producer is v]
        total = nodes.get(id(reads[0].consumer)) if len(reads) == 1 else None
        summed = [d for d in v.domain if total is None or d not in total.value.domain]
        if (
            total is None
            or len(total.cases) != 1
            or not _always(total.cases[0].constraints)
            or total.cases[0].body is None
            or not body_is_sum(funcs[total.cases[0].body].regions[0].blocks[0], len(summed))
        ):
            raise PassError(
                f"'{v.name}' has a partial store, but its only reader must be one node "
                f"that sums it over its parallel dims; plan the storage again "
                "(pdg-plan-storage)",
                v.op.location,
            )
        found[id(v)] = total
    return found


# The most chunks a partial store is cut into. A constant, not the number
# of threads: it fixes the order of the additions. It bounds the memory (a
# partial sum per chunk: this many copies of, e.g., a weight's gradient) and
# how many threads share the points (at most this many).
CHUNKS = 16


class PartialSumEmitter:
    """Mixed into Driver: uses its writer `w`, `prologue`, `scratch`,
    `buffer()`, `summing`, `extent_of()`, `run_point()`, `thread_count()`,
    `in_parallel` and `partial_chunks` (id(value) -> its points and chunk
    count, SSA); sets `chunk` and `chunk_single` (the chunk being emitted,
    and whether it holds one point) for `call_into_partial()`."""

    chunk: str | None = None
    scoped_partials: frozenset[int] | set[int] = frozenset()  # scope_partials(), set by the Driver
    chunk_single: str | None = None  # i1: the chunk being emitted holds one point

    def summed_dims(self, v) -> list[str]:
        """The dims the sum of `v` adds up (those of its domain the sum's
        node is not over)."""
        total = self.summing[id(v)].value
        return [d for d in v.domain if d not in total.domain]

    def chunk_count(self, v) -> str:
        """How many chunks the points of `v` are cut into (an SSA index
        computed in the prologue): min(points, CHUNKS)."""
        return self.chunks_of(v)[1]

    def chunks_of(self, v) -> tuple[str, str]:
        """(points, chunks) of `v`: SSA indices computed in the prologue."""
        if id(v) not in self.partial_chunks:
            w = self.prologue
            points = _product(w, [w.index(self.extent_of(d)) for d in self.summed_dims(v)])
            chunks = w.op(f"arith.minui {points}, {w.const(CHUNKS)} : index", "chunks")
            self.partial_chunks[id(v)] = (points, chunks)
        return self.partial_chunks[id(v)]

    def run_partials(self, node: Node, free: list[str], point: dict[str, str]) -> None:
        """The points of a value with a partial store: a parallel loop over
        the chunks, each zeroing its partial and then adding its points in
        row-major order. The points must be those the sum adds up (the
        reader's own dims are fixed by the loops around)."""
        v = node.value
        summed = self.summed_dims(v)
        point, free = self.own_worker_point(point, free)
        if sorted(free) != sorted(summed):
            raise PassError(
                f"'{v.name}' is summed in chunks over {', '.join(summed)}, but runs here "
                f"over {', '.join(free) or 'no dim'}; plan the storage again",
                v.op.location,
            )
        buf = self.buffer(v)
        w = self.w
        chunks = self.chunk_count(v)
        if id(v) in self.scoped_partials:  # freed by sum_partials
            buf.ssa = w.op(f"memref.alloc({chunks}) : {buf.type}", "partial")
        extents = [w.index(self.extent_of(d)) for d in free]
        points = _product(w, extents)
        zero, one = w.const(0), w.const(1)
        chunk = w.fresh("chunk")
        w.open(f"scf.parallel ({chunk}) = ({zero}) to ({chunks}) step ({one}) {{")
        # Chunk c holds the points [c * points / chunks, (c + 1) * points / chunks).
        after = w.op(f"arith.addi {chunk}, {one} : index")
        bounds = []
        for c in (chunk, after):
            scaled = w.op(f"arith.muli {c}, {points} : index")
            bounds.append(w.op(f"arith.divui {scaled}, {chunks} : index", "i"))
        held = w.op(f"arith.subi {bounds[1]}, {bounds[0]} : index")
        single = w.op(f"arith.cmpi eq, {held}, {one} : index", "single")
        rank = len(buf.point)
        mine, mine_t = subview(
            w, buf.ssa, buf.type, [chunk] + [0] * rank, [1, *buf.point], [False] + [True] * rank
        )
        _fill_zero(w, mine, mine_t)
        flat = w.fresh("at")
        w.open(f"scf.for {flat} = {bounds[0]} to {bounds[1]} step {one} {{")
        point = dict(point)
        # The coordinates of the point at `flat` in row-major order over
        # `free`: the innermost dim is the remainder by its extent, and so on.
        rest = flat
        for d, e in zip(free[:0:-1], extents[:0:-1], strict=True):
            point[d] = w.op(f"arith.remui {rest}, {e} : index", d)
            rest = w.op(f"arith.divui {rest}, {e} : index", "i")
        point[free[0]] = rest
        outer = self.in_parallel
        self.in_parallel, self.chunk, self.chunk_single = True, chunk, single
        self.run_point(node, point)
        self.in_parallel, self.chunk, self.chunk_single = outer, None, None
        w.close()
        w.line("scf.reduce")
        w.close()

    def own_worker_point(self, point: dict[str, str], free: list[str]):
        """(`point` with the worker dim among `free` at index 0, the rest of
        `free`): a rank holds one point along it, so a rank's partial sum
        (pdg-split-over-workers: the sum over its share of a dim, before
        the all-reduce) runs at that point like at a fixed coordinate."""
        workers = [d for d in free if self.m.graph.dims[d].worker]
        if not workers:
            return point, free
        point = dict(point)
        for d in workers:
            point[d] = self.w.const(0)
        return point, [d for d in free if d not in workers]

    def call_into_partial(self, buf: Buffer, call: Callable[[str, MemRef], None]) -> None:
        """A point's body, `call(destination, its type)`, into the partial
        sum of the chunk being emitted: directly when the chunk holds this
        one point (its partial starts at zero: a point that does not run
        leaves it so), else into this thread's scratch slot, then added."""
        w = self.w
        rank = len(buf.point)
        sizes, kept = [1, *buf.point], [False] + [True] * rank
        total, total_t = subview(w, buf.ssa, buf.type, [self.chunk] + [0] * rank, sizes, kept)
        w.open(f"scf.if {self.chunk_single} {{")
        call(total, total_t)
        w.close("} else {")
        w.depth += 1
        scratch, stype = self.thread_scratch(buf)
        thread = w.op("func.call @pdg_thread_index() : () -> index", "thread")
        mine, mine_t = subview(w, scratch, stype, [thread] + [0] * rank, sizes, kept)
        call(mine, mine_t)
        _elementwise_add(w, mine, mine_t, total, total_t)
        w.close()

    def thread_scratch(self, buf: Buffer) -> tuple[str, MemRef]:
        """A scratch slot per thread for the points of `buf` (allocated in
        the prologue), none when every chunk holds one point."""
        key = ("partial", id(buf.value))
        if key not in self.scratch:
            w = self.prologue
            points, chunks = self.chunks_of(buf.value)
            shared = w.op(f"arith.cmpi ugt, {points}, {chunks} : index", "shared")
            slots = w.op(f"arith.select {shared}, {self.thread_count()}, {w.const(0)} : index")
            self.scratch[key] = (w.op(f"memref.alloc({slots}) : {buf.type}", "scratch"), buf.type)
        return self.scratch[key]

    def sum_partials(self, node: Node, point: dict[str, str]) -> None:
        """The sum's node: its slot is the sum of the chunks' partials, in
        order."""
        v = node.value
        point, free = self.own_worker_point(point, [d for d in v.domain if d not in point])
        if free:
            raise PassError(
                f"'{v.name}' adds up partial sums, but runs over "
                f"{', '.join(free)}: its dims must be loops around it",
                v.op.location,
            )
        (read,) = node.cases[0].reads
        source = self.buffer(read.producer)
        buf = self.buffer(v)
        slot = self.slot_of(buf, point)
        rank = len(buf.point)
        out, out_t = subview(
            self.w,
            buf.ssa,
            buf.type,
            slot + [0] * rank,
            [1] * len(slot) + list(buf.point),
            [False] * len(slot) + [True] * rank,
        )
        _fill_zero(self.w, out, out_t)
        dims = [f"d{k}" for k in range(rank + 1)]
        maps = (
            f"affine_map<({', '.join(dims)}) -> ({', '.join(dims)})>, "
            f"affine_map<({', '.join(dims)}) -> ({', '.join(dims[1:])})>"
        )
        kinds = ", ".join(['"reduction"'] + ['"parallel"'] * rank)
        _add_body(
            self.w,
            f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}} "
            f"ins({source.ssa} : {source.type}) outs({out} : {out_t})",
            v.element,
        )
        if id(read.producer) in self.scoped_partials:  # allocated by run_partials
            self.w.line(f"memref.dealloc {source.ssa} : {source.type}")

    def scope_partials(self) -> set[int]:
        """id(value) of the partial stores allocated where their node runs
        and freed once their sum has read them, instead of for the whole
        run: those whose node and sum run in the same loop body (the same
        nests and groups, inside a loop). A training program's gradient
        summed over the microbatches then holds its chunks only from its
        node to its sum, not through the rest of the iteration."""
        nodes = {id(n.value): n for n in self.m.nodes}
        out = set()
        for key, total in self.summing.items():
            node = nodes.get(key)
            if node and node.loops and (node.loops, node.path) == (total.loops, total.path):
                out.add(key)
        return out


def _always(constraints) -> bool:
    """Whether a case's constraints hold everywhere (a default case's)."""
    for expr, is_eq in constraints:
        e = expr.maybe_downcast()
        if not isinstance(e, ir.AffineConstantExpr) or (e.value != 0 if is_eq else e.value < 0):
            return False
    return True


def _product(w: Writer, values: list[str]) -> str:
    """The product of SSA indices (at least one)."""
    out = values[0]
    for v in values[1:]:
        out = w.op(f"arith.muli {out}, {v} : index", "points")
    return out


def _fill_zero(w: Writer, target: str, ttype: MemRef) -> None:
    zero = w.op(f"arith.constant 0.0 : {ttype.element}", "zero")
    w.line(f"linalg.fill ins({zero} : {ttype.element}) outs({target} : {ttype})")


def _elementwise_add(w: Writer, src: str, src_t: MemRef, dst: str, dst_t: MemRef) -> None:
    """dst += src, same shapes."""
    dims = ", ".join(f"d{k}" for k in range(len(dst_t.shape)))
    identity = f"affine_map<({dims}) -> ({dims})>"
    kinds = ", ".join(['"parallel"'] * len(dst_t.shape))
    _add_body(
        w,
        f"linalg.generic {{indexing_maps = [{identity}, {identity}], iterator_types = [{kinds}]}} "
        f"ins({src} : {src_t}) outs({dst} : {dst_t})",
        dst_t.element,
    )


def _add_body(w: Writer, head: str, element: str) -> None:
    """`head` (a linalg.generic with one input and one output) whose
    region adds the input into the output."""
    a, b = w.fresh("a"), w.fresh("b")
    w.open(f"{head} {{")
    w.line(f"^bb0({a}: {element}, {b}: {element}):")
    s = w.op(f"arith.addf {a}, {b} : {element}", "s")
    w.line(f"linalg.yield {s} : {element}")
    w.close()
