"""Partial sums per thread: the Driver's part for `partial` stores (see
pdg.analysis.partial_sums).

A value with a partial store is read only by a sum over its parallel
dims. Its points run as usual, each into this thread's scratch slot, which
is then added into this thread's partial sum (zeroed before the points
run). The sum's node does not run its body: it adds the partials up."""

from __future__ import annotations

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


class PartialSumEmitter:
    """Mixed into Driver: uses its writer `w`, `prologue`, `scratch`,
    `buffer()`, `summing` and `thread_count()`."""

    def start_partials(self, node: Node, free: list[str]) -> None:
        """Before the points of a value with a partial store: every
        thread's sum starts at zero. The points must be those the sum
        adds up (the reader's own dims are fixed by the loops around)."""
        v = node.value
        total = self.summing[id(v)].value
        if sorted(free) != sorted(d for d in v.domain if d not in total.domain):
            raise PassError(
                f"'{v.name}' is summed per thread over "
                f"{', '.join(d for d in v.domain if d not in total.domain)}, but runs here "
                f"over {', '.join(free) or 'no dim'}; plan the storage again",
                v.op.location,
            )
        buf = self.buffer(v)
        _fill_zero(self.w, buf.ssa, buf.type)

    def partial_slot(self, buf: Buffer) -> tuple[str, MemRef, str, MemRef]:
        """(this thread's scratch slot, its type, this thread's partial sum,
        its type): the body writes the first, then it is added to the second."""
        w = self.w
        key = ("partial", id(buf.value))
        if key not in self.scratch:
            stype = buf.type
            self.scratch[key] = (
                self.prologue.op(f"memref.alloc({self.thread_count()}) : {stype}", "scratch"),
                stype,
            )
        scratch, stype = self.scratch[key]
        thread = w.op("func.call @pdg_thread_index() : () -> index", "thread")
        rank = len(buf.point)
        sizes, kept = [1, *buf.point], [False] + [True] * rank
        mine, mine_t = subview(w, scratch, stype, [thread] + [0] * rank, sizes, kept)
        total, total_t = subview(w, buf.ssa, buf.type, [thread] + [0] * rank, sizes, kept)
        return mine, mine_t, total, total_t

    def add_partial(self, mine: str, mine_t: MemRef, total: str, total_t: MemRef) -> None:
        _elementwise_add(self.w, mine, mine_t, total, total_t)

    def sum_partials(self, node: Node, point: dict[str, str]) -> None:
        """The sum's node: its slot is the sum of the threads' partials."""
        v = node.value
        free = [d for d in v.domain if d not in point]
        if free:
            raise PassError(
                f"'{v.name}' adds up per-thread partial sums, but runs over "
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


def _always(constraints) -> bool:
    """Whether a case's constraints hold everywhere (a default case's)."""
    for expr, is_eq in constraints:
        e = expr.maybe_downcast()
        if not isinstance(e, ir.AffineConstantExpr) or (e.value != 0 if is_eq else e.value < 0):
            return False
    return True


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
