"""The loop nests of the entry function (part of the Driver): an scf.for
over a static or launch sequential dim (forward, or backward for a nest of
backward recurrences), or an scf.while over a dynamic one that runs while
some sequence is alive. A sequence ends after the first step
where its `until` value holds, or at the dim's max; growable stores are
carried through the loop and grow when full; the step is published in
@pdg_step for progress displays."""

from __future__ import annotations

from dataclasses import dataclass

from pdg.analysis.graph import ELEMENT_BYTES, Dim
from pdg.passes.registry import PassError

from .buffers import GROW_FROM, Buffer
from .text import DYNAMIC, MemRef

LENGTHS = MemRef((DYNAMIC,), "i64")  # each sequence's length, as the entry returns it


@dataclass
class Loop:
    """The dynamic dim a loop nest runs over, and its bookkeeping."""

    dim: Dim
    index: str = ""  # SSA of the step inside the loop
    groups: list[str] | None = None  # dims of the `until` value besides the loop dim
    alive: str = ""
    lengths: str = ""
    count: str = ""  # memref<index> of live sequences


class LoopEmitter:
    """Mixed into Driver: uses its writers, `m`, `loop`, `buffers`,
    `run_node()`, `index_of()`, `extent_of()` and `grow_symbol()`."""

    def run_loop(self, dim: Dim, nodes: list, reverse: bool = False) -> None:
        """One loop nest: `nodes` at each step of `dim`, in order; from the
        last step to the first when `reverse`."""
        w = self.w
        if dim.kind != "dynamic":
            extent = w.index(self.extent_of(dim.name))
            k = w.fresh(dim.name)
            w.open(f"scf.for {k} = {w.const(0)} to {extent} step {w.const(1)} {{")
            step = k
            if reverse:  # extent - 1 - k
                last = w.op(f"arith.subi {extent}, {w.const(1)} : index")
                step = w.op(f"arith.subi {last}, {k} : index", dim.name)
            self.report_step(k)
            for n in nodes:
                self.run_node(n, {dim.name: step})
            w.close()
            return
        loop = self.loop
        self.track_sequences(dim)
        growing = [b for b in self.buffers.values() if b.grow_dim is not None]
        growing += self.side_buffers
        count = loop.count
        types = ["index", *(str(b.type) for b in growing)]
        inits = [w.const(0), *(b.ssa for b in growing)]
        before = [w.fresh("t"), *(w.fresh("g") for _ in growing)]
        results = w.fresh("loop")
        bindings = ", ".join(f"{a} = {i}" for a, i in zip(before, inits, strict=True))
        w.open(
            f"{results}:{len(types)} = scf.while ({bindings}) "
            f": ({', '.join(types)}) -> ({', '.join(types)}) {{"
        )
        left = w.op(f"memref.load {count}[] : memref<index>")
        go = w.op(f"arith.cmpi sgt, {left}, {w.const(0)} : index")
        if self.udfs_possible():
            # A host callback that failed stops the loop after this step.
            flag = w.op("memref.get_global @pdg_abort : memref<i8>")
            failed = w.op(f"memref.load {flag}[] : memref<i8>")
            ok = w.op(f"arith.cmpi eq, {failed}, {w.const(0, 'i8')} : i8")
            go = w.op(f"arith.andi {go}, {ok} : i1")
        w.line(f"scf.condition({go}) {', '.join(before)} : {', '.join(types)}")
        w.close("} do {")
        after = [w.fresh("t"), *(w.fresh("g") for _ in growing)]
        w.line(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(after, types, strict=True))}):")
        w.depth += 1
        loop.index = after[0]
        self.report_step(loop.index)
        for b, ssa in zip(growing, after[1:], strict=True):
            b.set_ssa(self.grow(b, ssa, loop.index))
        for n in nodes:
            self.run_node(n, {dim.name: loop.index})
        self.end_sequences(dim)
        step = w.op(f"arith.addi {loop.index}, {w.const(1)} : index", "t")
        w.line(f"scf.yield {', '.join([step, *(b.ssa for b in growing)])} : {', '.join(types)}")
        w.close()
        for k, b in enumerate(growing):
            b.set_ssa(f"{results}#{k + 1}")

    def report_step(self, step: str) -> None:
        """Stores the step in @pdg_step, which a progress display polls."""
        w = self.w
        flag = w.op("memref.get_global @pdg_step : memref<i64>")
        value = w.op(f"arith.index_cast {step} : index to i64")
        w.line(f"memref.store {value}, {flag}[] : memref<i64>")
        self.uses_step = True

    def track_sequences(self, dim: Dim) -> None:
        """Alive flags and lengths per sequence (per coordinate of the `until`
        value's other dims) and the count of live ones."""
        w = self.prologue
        loop = self.loop
        until = self.m.graph.value(dim.until)
        groups = [d for d in until.domain if d != dim.name]
        if len(groups) > 1:
            raise PassError(
                f"dim '{dim.name}' ends per ({', '.join(groups)}); the lowering supports "
                "sequences along at most one dim",
                until.op.location,
            )
        loop.groups = groups
        n = self.extent_of(groups[0]) if groups else 1
        n = w.index(n) if isinstance(n, int) else n
        loop.alive = w.op(f"memref.alloc({n}) : memref<?xi8>", "alive")
        w.line(f"linalg.fill ins({w.const(1, 'i8')} : i8) outs({loop.alive} : memref<?xi8>)")
        loop.lengths = w.op(f"memref.alloc({n}) : {LENGTHS}", "lengths")
        loop.count = w.op("memref.alloca() : memref<index>", "live")
        w.line(f"memref.store {n}, {loop.count}[] : memref<index>")

    def end_sequences(self, dim: Dim) -> None:
        """After a step: a live sequence whose `until` holds, or that reached
        the dim's max, ends with length step + 1."""
        w = self.w
        loop = self.loop
        until = self.m.graph.value(dim.until)
        ubuf = self.buffer(until)
        n = self.extent_of(loop.groups[0]) if loop.groups else 1
        g = w.fresh("seq")
        w.open(f"scf.for {g} = {w.const(0)} to {w.index(n)} step {w.const(1)} {{")
        alive = w.op(f"memref.load {loop.alive}[{g}] : memref<?xi8>")
        on = w.op(f"arith.cmpi ne, {alive}, {w.const(0, 'i8')} : i8")
        w.open(f"scf.if {on} {{")
        point = {dim.name: loop.index}
        if loop.groups:
            point[loop.groups[0]] = g
        at = [self.index_of(ubuf, j, point[d]) for j, d in enumerate(until.domain)]
        at += [w.const(0)] * len(ubuf.point)
        stop = w.op(f"memref.load {ubuf.ssa}[{', '.join(at)}] : {ubuf.type}")
        length = w.op(f"arith.addi {loop.index}, {w.const(1)} : index")
        if dim.size is not None:
            last = w.op(f"arith.cmpi eq, {length}, {w.const(dim.size)} : index")
            stop = w.op(f"arith.ori {stop}, {last} : i1")
        w.open(f"scf.if {stop} {{")
        w.line(f"memref.store {w.const(0, 'i8')}, {loop.alive}[{g}] : memref<?xi8>")
        as_i64 = w.op(f"arith.index_cast {length} : index to i64")
        w.line(f"memref.store {as_i64}, {loop.lengths}[{g}] : {LENGTHS}")
        left = w.op(f"memref.load {loop.count}[] : memref<index>")
        left = w.op(f"arith.subi {left}, {w.const(1)} : index")
        w.line(f"memref.store {left}, {loop.count}[] : memref<index>")
        w.close()
        w.close()
        w.close()

    def grow(self, buf: Buffer, current: str, step: str) -> str:
        """Grows growable `current` by an eighth (at least GROW_FROM steps,
        at most to the dim's max) when `step` reaches its capacity. The
        support code's pdg_<graph>_grow_<k> reallocates in place where it can and
        moves the rows of the outer dims apart, so the old and new buffers
        are never both live."""
        w = self.w
        j = buf.grow_dim
        dim = self.m.graph.dims[buf.value.domain[j]]
        cap = w.op(f"memref.dim {current}, {w.const(j)} : {buf.type}")
        full = w.op(f"arith.cmpi eq, {step}, {cap} : index")
        grown = w.fresh("grown")
        w.open(f"{grown} = scf.if {full} -> ({buf.type}) {{")
        eighth = w.op(f"arith.divui {cap}, {w.const(8)} : index")
        more = w.op(f"arith.maxui {eighth}, {w.const(GROW_FROM)} : index")
        bigger = w.op(f"arith.addi {cap}, {more} : index")
        if dim.size is not None:
            bigger = w.op(f"arith.minsi {bigger}, {w.const(dim.size)} : index")
        element = w.const(ELEMENT_BYTES[buf.type.element])
        if str(buf.type) not in self.grow_types:
            self.grow_types[str(buf.type)] = (len(self.grow_types), len(buf.type.shape))
        k = self.grow_types[str(buf.type)][0]
        new = w.op(
            f"func.call @{self.grow_symbol(k)}({current}, {w.const(j)}, {bigger}, {element}) "
            f": ({buf.type}, index, index, index) -> {buf.type}",
            "store",
        )
        w.line(f"scf.yield {new} : {buf.type}")
        w.close("} else {")
        w.depth += 1
        w.line(f"scf.yield {current} : {buf.type}")
        w.close()
        return grown
