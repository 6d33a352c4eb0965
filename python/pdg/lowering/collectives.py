"""Collectives in the entry function (part of the Driver): each point of a
collective's value is one call of the C runtime's MPI layer
(runtime/lib/mpi.c), on the calling thread, in schedule order.

A compiled program runs one rank per process. Along a worker dim (`world
W`) each rank holds its own point only: the dim's stores have extent 1
(index 0 is this rank's point), while the coordinate a body or a case
condition sees is the rank, and the symbol W is the world's size. Every
rank runs the same schedule, so the ranks make the same collective calls in
the same order, which is what MPI needs; the calls never run inside a
parallel loop (two threads of one rank would race to the communicator)."""

from __future__ import annotations

from pdg.analysis.graph import Value
from pdg.passes.registry import PassError

from .model import Case, LoweringModel, Node
from .text import DYNAMIC, MemRef

# runtime/include/pdg/runtime.h: PDG_ALL_REDUCE_SUM, ...
OPERATIONS = {
    ("all_reduce", "sum"): 0,
    ("all_reduce", "max"): 1,
    ("broadcast", None): 2,
    ("all_gather", None): 3,
    ("reduce_scatter", "sum"): 4,
    ("reduce_scatter", "max"): 5,
    ("shift", None): 6,
}
# The runtime's entry points by the input's dims less the result's: an
# all-gather's input has one dim less, a reduce-scatter's one more.
ENTRIES = {"all_gather": "pdg_collective_gather", "reduce_scatter": "pdg_collective_scatter"}
# The element types the runtime passes to MPI (PDG_ELEMENT_F32, ...).
ELEMENTS = {"f32": 0, "f64": 1, "i32": 2, "i64": 3}
MAX_RANK = 8  # point ranks with a runtime entry point (pdg_collective_<rank>, ...)


def check_collectives(model: LoweringModel) -> None:
    """Refuses, at the op, what the compiled path does not run yet."""
    workers = [d for d in model.graph.dims.values() if d.worker]
    if len(workers) > 1:
        raise PassError(
            f"dims {', '.join(d.name for d in workers)} are all worker dims; a compiled "
            "program runs over one communicator, so it has one worker dim",
            model.graph.op.location,
        )
    for node in model.nodes:
        c = node.cases[0].collective if node.cases else None
        if c is None:
            continue
        v = node.value
        if v.element not in ELEMENTS:
            raise PassError(
                f"'{v.name}': the compiled collectives take f32, f64, i32 or i64 points, "
                f"not {v.element}",
                v.op.location,
            )
        # An all-gather's leading dim is the world's size (its slot is W rows).
        fixed = v.shape[1:] if c["op"] == "all_gather" else v.shape
        source = node.cases[0].reads[0].producer.shape
        if (
            any(s is None for s in fixed)
            or any(s is None for s in source)
            or max(len(v.shape), len(source)) > MAX_RANK
        ):
            raise PassError(
                f"'{v.name}': the compiled collectives take points of a fixed shape of at "
                f"most {MAX_RANK} dims",
                v.op.location,
            )


class CollectiveEmitter:
    """Mixed into Driver: uses its writer `w`, `prologue`, `buffer()`,
    `slot_of()`, `slot_view()` and the model `m`."""

    def is_worker(self, dim: str) -> bool:
        return self.m.graph.dims[dim].worker

    def rank(self) -> str:
        """This process's rank (an SSA index computed in the prologue)."""
        if self.rank_ssa is None:
            self.rank_ssa = self.prologue.op("func.call @pdg_world_rank() : () -> index", "rank")
        return self.rank_ssa

    def coordinates(self, v: Value, point: dict[str, str]) -> dict[str, str]:
        """`point` as a body or a condition sees it: the rank along worker dims."""
        if not any(self.is_worker(d) for d in v.domain):
            return point
        return {d: self.rank() if self.is_worker(d) else c for d, c in point.items()}

    def call_collective(self, node: Node, case: Case, point: dict[str, str]) -> None:
        """`pdg_collective_<rank>(input, result, operation, element, root, site)`
        at one point of the collective's value: the input is this rank's point
        of the value read (index 0 along the worker dim), the result the
        value's slot; `root` is a broadcast's root or a shift's distance."""
        w = self.w
        v = node.value
        c = case.collective
        (read,) = case.reads
        src = self.buffer(read.producer)
        at = {**point, c["over"]: w.const(0)}
        in_slot = self.slot_of(src, at)
        rank = len(v.shape)
        to = MemRef((DYNAMIC,) * rank, v.element).fully_dynamic()
        source_type = MemRef((DYNAMIC,) * len(read.producer.shape), v.element).fully_dynamic()
        source = self.slot_view(src, in_slot, str(source_type))
        buf = self.buffer(v)
        target = self.slot_view(buf, self.slot_of(buf, point), str(to))
        site = len(self.collectives)
        self.collectives.append(
            {"value": v.name, "op": c["op"], "over": c["over"], "location": v.loc}
        )
        operation = OPERATIONS[(c["op"], c.get("reduction"))]
        args = [
            source,
            target,
            w.const(operation, "i32"),
            w.const(ELEMENTS[v.element], "i32"),
            w.const(c.get("root", c.get("by", 0)), "i64"),
            w.const(site, "i64"),
        ]
        name = f"{ENTRIES.get(c['op'], 'pdg_collective')}_{rank}"
        types = [str(source_type), str(to), "i32", "i32", "i64", "i64"]
        w.line(f"func.call @{name}({', '.join(args)}) : ({', '.join(types)}) -> ()")
        if buf.dynamic_point_dims:  # an all-gather's rows (its only `?`): one per rank
            at = ", ".join([*self.slot_of(buf, point), w.const(0)])
            world = self.symbols[self.m.graph.dims[c["over"]].symbol]
            w.line(f"memref.store {world}, {buf.shapes}[{at}] : {buf.shapes_type}")
        declaration = (
            f"func.func private @{name}({', '.join(types)}) attributes {{llvm.emit_c_interface}}"
        )
        if declaration not in self.declarations:
            self.declarations.append(declaration)
