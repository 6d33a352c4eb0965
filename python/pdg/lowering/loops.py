"""The loop nests of the entry function (part of the Driver): an scf.for
over a static or launch sequential dim (forward, or backward for a nest of
backward recurrences), or an scf.while over a dynamic one that runs while
some sequence is alive. A sequence ends after the first step where its
`until` value holds, or at the dim's max; growable stores are carried
through the loops and grow when full; the step is published in @pdg_step
for progress displays.

Every step first checks @pdg_abort (pdg/runtime.h): a failed host
callback, an index out of range, a store that could not grow or SIGINT
stop the run within one step, and the entry then frees its stores and
returns. Nodes outside any loop are checked the same way.

Nests may sit inside nests (a generation loop over t inside a training
loop over i): the sequences of a dynamic dim start alive again at each
entry of its loop, and its `until` value's coordinates along the enclosing
loops are fixed by them. A later nest over a dynamic dim (a gradient, or a
pass over the finished sequences) replays the steps the first one ran: an
scf.for up to the longest sequence, each sequence's nodes guarded by its
length."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pdg.analysis.graph import ELEMENT_BYTES, Dim, Read, Value
from pdg.passes.registry import PassError

from .buffers import GROW_FROM, Buffer
from .text import DYNAMIC, MemRef

FAULT_COORDS = 8  # PDG_FAULT_COORDS in pdg/runtime.h: the point a fault records
LENGTHS = MemRef((DYNAMIC,), "i64")  # each sequence's length, as the entry returns it


@dataclass
class Loop:
    """A dynamic dim's bookkeeping. Sequences are the coordinates of its
    `until` value's other dims (`groups`), less those fixed by enclosing
    loops; flags and lengths are indexed row-major over them."""

    dim: Dim
    groups: list[str]
    enclosing: tuple[str, ...]  # the dims of the loops around the first nest over it
    alive: str = ""  # memref<?xi8>: 1 while the sequence runs
    lengths: str = ""  # memref<?xi64>: its length once it ended
    count: str = ""  # memref<index>: live sequences
    steps: str = ""  # memref<index>: the steps the first nest ran (the longest sequence)
    sequences: str = ""  # SSA (prologue): how many sequences
    index: str = ""  # SSA of the step inside a nest over the dim
    replay: bool = False  # inside a later nest: lengths are known, flags are not used


class LoopEmitter:
    """Mixed into Driver: uses its writers, `m`, `dynamic`, `active`,
    `buffers`, `ended_reads`, `index_of()`, `slice_bounds()`, `extent_of()` and
    `grow_symbol()`."""

    def run_loop(
        self,
        dim: Dim,
        point: dict[str, str],
        body: Callable[[dict[str, str]], None],
        reverse: bool = False,
        computed: set[int] | None = None,
    ) -> None:
        """One loop nest inside the loops of `point`: `body` at each step of
        `dim`, from the last step to the first when `reverse`. `computed`:
        the ids of the values the nest computes (their full stores along a
        dynamic dim grow in it)."""
        if dim.kind != "dynamic":
            extent = self.w.index(self.extent_of(dim.name))
            self.counted_loop(dim, extent, point, body, reverse)
            return
        loop = self.dynamic.get(dim.name)
        if loop is None:
            if reverse:
                raise PassError(
                    f"the first loop over dynamic dim '{dim.name}' steps backward; its "
                    "sequences' lengths are found stepping forward",
                    self.m.graph.op.location,
                )
            self.live_loop(dim, point, body, computed or set())
            return
        if loop.enclosing != tuple(point):
            raise PassError(
                f"dynamic dim '{dim.name}' is looped over inside different loops "
                f"({', '.join(loop.enclosing) or 'none'}, then {', '.join(point) or 'none'}); "
                "the lowering replays a dynamic dim only inside the loops of its first nest",
                self.m.graph.op.location,
            )
        self.replay_loop(loop, point, body, reverse, computed or set())

    def growing(self) -> list[Buffer]:
        """Buffers whose memref may change in a loop (growable stores and
        their side buffers): loops carry them."""
        return [b for b in self.buffers.values() if b.grow_dim is not None] + self.side_buffers

    def counted_loop(self, dim: Dim, extent: str, point, body, reverse: bool) -> None:
        """scf.for over `extent` steps of `dim`, carrying the growable
        buffers (a dynamic loop inside may grow them)."""
        w = self.w
        k = w.fresh(dim.name)
        carried = self.growing()
        head = f"scf.for {k} = {w.const(0)} to {extent} step {w.const(1)}"
        results = w.fresh("loop")
        if carried:
            args = [w.fresh("g") for _ in carried]
            bindings = ", ".join(f"{a} = {b.ssa}" for a, b in zip(args, carried, strict=True))
            types = ", ".join(str(b.type) for b in carried)
            w.open(f"{results}:{len(carried)} = {head} iter_args({bindings}) -> ({types}) {{")
            for b, a in zip(carried, args, strict=True):
                b.set_ssa(a)
        else:
            w.open(f"{head} {{")
        step = k
        if reverse:  # extent - 1 - k
            last = w.op(f"arith.subi {extent}, {w.const(1)} : index")
            step = w.op(f"arith.subi {last}, {k} : index", dim.name)
        self.report_step(k)
        self.unless_stopped(lambda: body({**point, dim.name: step}))
        if carried:
            w.line(f"scf.yield {', '.join(b.ssa for b in carried)} : {types}")
        w.close()
        for n, b in enumerate(carried):
            b.set_ssa(f"{results}#{n}")

    def live_loop(self, dim: Dim, point: dict[str, str], body, computed: set[int]) -> None:
        """The first nest over a dynamic dim: scf.while some sequence is
        alive, growing full stores as steps come."""
        w = self.w
        until = self.m.graph.value(dim.until)
        if id(until) not in computed:
            names = [n.value.name for n in self.m.nodes if id(n.value) in computed]
            raise PassError(
                f"'{names[0]}' runs in the first loop over dynamic dim '{dim.name}', which "
                f"does not compute its end condition '{until.name}' "
                f"[{', '.join(until.domain)}]: the loop could not tell when to stop; make "
                f"'{names[0]}' depend on what '{until.name}' reads, or run after it",
                self.m.graph.value(names[0]).op.location,
            )
        loop = self.track_sequences(dim, point)
        if point:  # inside a loop: its step is guarded already
            self.reset_sequences(loop)
        else:
            self.unless_stopped(lambda: self.reset_sequences(loop), carry=False)
        growing = self.growing()
        types = ["index", *(str(b.type) for b in growing)]
        inits = [w.const(0), *(b.ssa for b in growing)]
        before = [w.fresh("t"), *(w.fresh("g") for _ in growing)]
        results = w.fresh("loop")
        bindings = ", ".join(f"{a} = {i}" for a, i in zip(before, inits, strict=True))
        w.open(
            f"{results}:{len(types)} = scf.while ({bindings}) "
            f": ({', '.join(types)}) -> ({', '.join(types)}) {{"
        )
        left = w.op(f"memref.load {loop.count}[] : memref<index>")
        go = w.op(f"arith.cmpi sgt, {left}, {w.const(0)} : index")
        go = w.op(f"arith.andi {go}, {self.not_stopped()} : i1")
        w.line(f"scf.condition({go}) {', '.join(before)} : {', '.join(types)}")
        w.close("} do {")
        after = [w.fresh("t"), *(w.fresh("g") for _ in growing)]
        w.line(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(after, types, strict=True))}):")
        w.depth += 1
        loop.index = after[0]
        self.report_step(loop.index)
        for b, ssa in zip(growing, after[1:], strict=True):
            grows = id(b.value) in computed and self.grows_along(b, dim)
            b.set_ssa(self.grow(b, ssa, loop.index) if grows else ssa)
        self.active.append(loop)

        def step_body() -> None:
            body({**point, dim.name: loop.index})
            self.end_sequences(loop, point)

        # After growing: a store that could not grow stops the run here.
        self.unless_stopped(step_body)
        self.active.pop()
        step = w.op(f"arith.addi {loop.index}, {w.const(1)} : index", "t")
        w.line(f"scf.yield {', '.join([step, *(b.ssa for b in growing)])} : {', '.join(types)}")
        w.close()
        for k, b in enumerate(growing):
            b.set_ssa(f"{results}#{k + 1}")
        w.line(f"memref.store {results}#0, {loop.steps}[] : memref<index>")

    def replay_loop(self, loop: Loop, point, body, reverse: bool, computed: set[int]) -> None:
        """A later nest over a dynamic dim: the steps its first nest ran,
        forward or backward; a sequence's nodes run below its length."""
        w = self.w
        steps = w.op(f"memref.load {loop.steps}[] : memref<index>", "steps")
        # Full stores computed here hold every step before the loop: a
        # backward nest writes its last step first.
        for b in self.growing():
            if id(b.value) in computed and self.grows_along(b, loop.dim):
                b.set_ssa(self.grow(b, b.ssa, steps, to=steps))
        loop.replay = True
        self.active.append(loop)

        def step_body(at: dict[str, str]) -> None:
            loop.index = at[loop.dim.name]
            body(at)

        self.counted_loop(loop.dim, steps, point, step_body, reverse)
        self.active.pop()
        loop.replay = False

    def not_stopped(self) -> str:
        """An i1: @pdg_abort is 0 (the run goes on)."""
        w = self.w
        flag = w.op("memref.get_global @pdg_abort : memref<i8>")
        reason = w.op(f"memref.load {flag}[] : memref<i8>")
        return w.op(f"arith.cmpi eq, {reason}, {w.const(0, 'i8')} : i8")

    def unless_stopped(self, emit: Callable[[], None], carry: bool = True) -> None:
        """What `emit` writes, run only while the run goes on; with `carry`,
        the growable buffers it may replace (a loop inside grows them) are
        carried out of the scf.if."""
        w = self.w
        ok = self.not_stopped()
        carried = self.growing() if carry else []
        if not carried:
            w.open(f"scf.if {ok} {{")
            emit()
            w.close()
            return
        before = [b.ssa for b in carried]
        types = ", ".join(str(b.type) for b in carried)
        results = w.fresh("kept")
        w.open(f"{results}:{len(carried)} = scf.if {ok} -> ({types}) {{")
        emit()
        w.line(f"scf.yield {', '.join(b.ssa for b in carried)} : {types}")
        w.close("} else {")
        w.depth += 1
        w.line(f"scf.yield {', '.join(before)} : {types}")
        w.close()
        for n, b in enumerate(carried):
            b.set_ssa(f"{results}#{n}")

    def grows_along(self, buf: Buffer, dim: Dim) -> bool:
        return buf.value.domain[buf.grow_dim] == dim.name

    def grow_number(self, buf: Buffer) -> int:
        """The buffer's number in the ABI's grow_stores, which a memory
        fault reports."""
        if id(buf) not in self.grow_numbers:
            self.grow_numbers[id(buf)] = len(self.grow_stores)
            owner = buf.owner if buf.owner is not None else buf
            self.grow_stores.append(
                {
                    "value": owner.value.name,
                    "dim": buf.value.domain[buf.grow_dim],
                    "sizes": buf.owner is not None,
                }
            )
        return self.grow_numbers[id(buf)]

    def report_step(self, step: str) -> None:
        """Stores the step in @pdg_step, which a progress display polls."""
        w = self.w
        flag = w.op("memref.get_global @pdg_step : memref<i64>")
        value = w.op(f"arith.index_cast {step} : index to i64")
        w.line(f"memref.store {value}, {flag}[] : memref<i64>")
        self.uses_step = True

    def track_sequences(self, dim: Dim, point: dict[str, str]) -> Loop:
        """The flags, lengths and counters of a dynamic dim's sequences,
        allocated once in the prologue."""
        w = self.prologue
        until = self.m.graph.value(dim.until)
        groups = [d for d in until.domain if d != dim.name and d not in point]
        loop = Loop(dim, groups, tuple(point))
        self.dynamic[dim.name] = loop
        n = None
        for g in groups:
            extent = w.index(self.extent_of(g))
            n = extent if n is None else w.op(f"arith.muli {n}, {extent} : index")
        n = n or w.const(1)
        loop.sequences = n
        loop.alive = w.op(f"memref.alloc({n}) : memref<?xi8>", "alive")
        loop.lengths = w.op(f"memref.alloc({n}) : {LENGTHS}", "lengths")
        loop.count = w.op("memref.alloca() : memref<index>", "live")
        loop.steps = w.op("memref.alloca() : memref<index>", "steps")
        w.line(f"memref.store {w.const(0)}, {loop.steps}[] : memref<index>")
        return loop

    def reset_sequences(self, loop: Loop) -> None:
        """Every sequence alive again, where the loop starts (inside the
        loops around it, at each of their steps)."""
        w = self.w
        w.line(f"linalg.fill ins({w.const(1, 'i8')} : i8) outs({loop.alive} : memref<?xi8>)")
        w.line(f"memref.store {loop.sequences}, {loop.count}[] : memref<index>")

    def sequence_index(self, loop: Loop, point: dict[str, str]) -> str:
        """The row-major index of the sequence at `point` in the flags and
        lengths."""
        w = self.w
        index = None
        for g in loop.groups:
            if index is None:
                index = point[g]
                continue
            extent = w.index(self.extent_of(g))
            index = w.op(f"arith.muli {index}, {extent} : index")
            index = w.op(f"arith.addi {index}, {point[g]} : index")
        return index or w.const(0)

    def end_sequences(self, loop: Loop, point: dict[str, str]) -> None:
        """After a step: a live sequence whose `until` holds, or that reached
        the dim's max, ends with length step + 1."""
        w = self.w
        dim = loop.dim
        until = self.m.graph.value(dim.until)
        ubuf = self.buffer(until)
        at_point = {**point, dim.name: loop.index}
        opened = 0
        for g in loop.groups:
            at_point[g] = w.fresh("seq")
            extent = w.index(self.extent_of(g))
            w.open(f"scf.for {at_point[g]} = {w.const(0)} to {extent} step {w.const(1)} {{")
            opened += 1
        seq = self.sequence_index(loop, at_point)
        alive = w.op(f"memref.load {loop.alive}[{seq}] : memref<?xi8>")
        on = w.op(f"arith.cmpi ne, {alive}, {w.const(0, 'i8')} : i8")
        w.open(f"scf.if {on} {{")
        at = [self.index_of(ubuf, j, at_point[d]) for j, d in enumerate(until.domain)]
        at += [w.const(0)] * len(ubuf.point)
        stop = w.op(f"memref.load {ubuf.ssa}[{', '.join(at)}] : {ubuf.type}")
        length = w.op(f"arith.addi {loop.index}, {w.const(1)} : index")
        if dim.size is not None:
            last = w.op(f"arith.cmpi eq, {length}, {w.const(dim.size)} : index")
            stop = w.op(f"arith.ori {stop}, {last} : i1")
        w.open(f"scf.if {stop} {{")
        w.line(f"memref.store {w.const(0, 'i8')}, {loop.alive}[{seq}] : memref<?xi8>")
        as_i64 = w.op(f"arith.index_cast {length} : index to i64")
        w.line(f"memref.store {as_i64}, {loop.lengths}[{seq}] : {LENGTHS}")
        left = w.op(f"memref.load {loop.count}[] : memref<index>")
        left = w.op(f"arith.subi {left}, {w.const(1)} : index")
        w.line(f"memref.store {left}, {loop.count}[] : memref<index>")
        w.close()
        w.close()
        for _ in range(opened):
            w.close()

    def sequence_guard(self, loop: Loop, point: dict[str, str]) -> str:
        """An i1 that holds while the sequence at `point` runs: its flag in
        the first nest, step < its length in a replay."""
        w = self.w
        seq = self.sequence_index(loop, point)
        if loop.replay:
            length = w.op(f"memref.load {loop.lengths}[{seq}] : {LENGTHS}")
            length = w.op(f"arith.index_cast {length} : i64 to index")
            return w.op(f"arith.cmpi slt, {loop.index}, {length} : index")
        alive = w.op(f"memref.load {loop.alive}[{seq}] : memref<?xi8>")
        return w.op(f"arith.cmpi ne, {alive}, {w.const(0, 'i8')} : i8")

    def check_sequences_read(self, read: Read, point: dict[str, str], consumer: Value) -> None:
        """A node that is not over a sequence's group dims, reading a value
        over them at one step of the loop (a sum over the rows at step t),
        must read only sequences that ran that step: the interpreter stops
        on such a read, and the compiled code would read the slot's last
        value. Each sequence read is checked as the read is made; one that
        ended before the step stops the run (pdg_ended_fault). A node over
        the group dims runs only while its own sequence does
        (run_point)."""
        producer = read.producer
        for loop in self.active:
            groups = loop.groups
            if not groups or all(g in consumer.domain for g in groups):
                continue
            if loop.dim.name not in producer.domain or any(
                g not in producer.domain for g in groups
            ):
                continue
            entries = dict(zip(producer.domain, read.affine, strict=True))
            if entries[loop.dim.name][0] != "point":
                continue
            self.check_steps_of(loop, entries, point, consumer, read)

    def check_steps_of(
        self, loop: Loop, entries: dict, point: dict[str, str], consumer: Value, read: Read
    ) -> None:
        """The check of check_sequences_read for one loop: a site in
        abi.ended_reads, then each sequence of the read (a loop over each
        group dim it takes a range of) tested against its length."""
        w = self.w
        step = self.affine("apply", [entries[loop.dim.name][1]], consumer, point)
        site = len(self.ended_reads)
        self.ended_reads.append(
            {
                "consumer": consumer.name,
                "producer": read.producer.name,
                "dim": loop.dim.name,
                "groups": list(loop.groups),
                "location": consumer.loc,
            }
        )
        at, opened = {}, 0
        for g in loop.groups:  # each sequence the read takes
            entry = entries[g]
            if entry[0] == "point":
                at[g] = self.affine("apply", [entry[1]], consumer, point)
                continue
            lo, hi = self.slice_bounds(entry, consumer, point)
            at[g] = w.fresh("seq")
            w.open(f"scf.for {at[g]} = {lo} to {hi} step {w.const(1)} {{")
            opened += 1
        seq = self.sequence_index(loop, at)
        if not loop.replay:  # a live sequence has not ended: only ended ones are checked
            alive = w.op(f"memref.load {loop.alive}[{seq}] : memref<?xi8>")
            ended = w.op(f"arith.cmpi eq, {alive}, {w.const(0, 'i8')} : i8")
            w.open(f"scf.if {ended} {{")
            opened += 1
        length = w.op(f"memref.load {loop.lengths}[{seq}] : {LENGTHS}")
        as_i64 = w.op(f"arith.index_cast {step} : index to i64")
        past = w.op(f"arith.cmpi sge, {as_i64}, {length} : i64")
        w.open(f"scf.if {past} {{")
        coords = [w.op(f"arith.index_cast {at[g]} : index to i64") for g in loop.groups]
        coords = coords[:FAULT_COORDS] + [w.const(0, "i64")] * (FAULT_COORDS - len(coords))
        args = [w.const(site, "i64"), as_i64, length, w.const(len(loop.groups), "i64"), *coords]
        w.line(f"func.call @pdg_ended_fault({', '.join(args)}) : ({', '.join(['i64'] * 12)}) -> ()")
        w.close()
        for _ in range(opened):
            w.close()
        declaration = f"func.func private @pdg_ended_fault({', '.join(['i64'] * 12)})"
        if declaration not in self.declarations:
            self.declarations.append(declaration)

    def grow(self, buf: Buffer, current: str, step: str, to: str | None = None) -> str:
        """Grows growable `current` by an eighth (at least GROW_FROM steps,
        at most to the dim's max) when `step` reaches its capacity; with
        `to`, to at least `to` steps when it holds fewer. The runtime's
        pdg_grow (through pdg_<graph>_grow_<k>) reallocates in place where it
        can and moves the rows of the outer dims apart, so the old and new
        buffers are never both live; when it cannot grow, it stops the run
        and returns the buffer as it was."""
        w = self.w
        j = buf.grow_dim
        dim = self.m.graph.dims[buf.value.domain[j]]
        cap = w.op(f"memref.dim {current}, {w.const(j)} : {buf.type}")
        if to is None:
            full = w.op(f"arith.cmpi eq, {step}, {cap} : index")
        else:
            full = w.op(f"arith.cmpi ult, {cap}, {to} : index")
        grown = w.fresh("grown")
        w.open(f"{grown} = scf.if {full} -> ({buf.type}) {{")
        if to is None:
            eighth = w.op(f"arith.divui {cap}, {w.const(8)} : index")
            more = w.op(f"arith.maxui {eighth}, {w.const(GROW_FROM)} : index")
            bigger = w.op(f"arith.addi {cap}, {more} : index")
        else:
            bigger = to
        if dim.size is not None:
            bigger = w.op(f"arith.minsi {bigger}, {w.const(dim.size)} : index")
        element = w.const(ELEMENT_BYTES[buf.type.element])
        if str(buf.type) not in self.grow_types:
            self.grow_types[str(buf.type)] = (len(self.grow_types), len(buf.type.shape))
        k = self.grow_types[str(buf.type)][0]
        new = w.op(
            f"func.call @{self.grow_symbol(k)}({current}, {w.const(j)}, {bigger}, {element}, "
            f"{w.const(self.grow_number(buf))}) : ({buf.type}, index, index, index, index) "
            f"-> {buf.type}",
            "store",
        )
        w.line(f"scf.yield {new} : {buf.type}")
        w.close("} else {")
        w.depth += 1
        w.line(f"scf.yield {current} : {buf.type}")
        w.close()
        return grown
