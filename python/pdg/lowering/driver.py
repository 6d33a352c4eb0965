"""The entry function of a compiled program, emitted as MLIR text.

    func.func @pdg_<graph>(inputs..., launch symbols...) -> (outputs..., lengths...)

It allocates every store from the symbol values (those of a fixed size as
views of one block, where stores whose lifetimes do not overlap take turns:
arena.py), runs the `before` nodes,
then the loop over the sequential dim with the `loop` nodes in schedule
order, then the `after` nodes, and returns the outputs' stores and, for a
dynamic dim, each sequence's length. Nodes over a sequence's dims run only
while it is alive. No Python runs between steps.

The Driver holds the emission state; views.py (reading and writing store
slots), loops.py (the loop, sequence ends, growth) and partials.py (sums
kept in chunks) are its parts."""

from __future__ import annotations

from dataclasses import dataclass, field

from pdg.analysis.graph import ELEMENT_BYTES, Dim, Value
from pdg.analysis.storage import Store
from pdg.passes.registry import PassError

from .arena import Lifetimes, byte_size, place, shareable
from .bodies import Wrapper
from .buffers import GROW_FROM, Buffer, check_static_size, plan_buffer
from .collectives import CollectiveEmitter
from .loops import LENGTHS, Loop, LoopEmitter
from .model import Case, LoweringModel, Node
from .partials import PartialSumEmitter
from .returned_slots import returned_slots, slot_groups, slot_view
from .updated_in_place import InPlace, in_place_suffix
from .text import DYNAMIC, MemRef, Writer, c_identifier, cast, symbol
from .trampolines import grow_start_symbol
from .views import ViewEmitter


@dataclass
class EntryABI:
    """The entry's signature, for the artifact's manifest and the runtime:
    inputs (memref arguments, in order), then one index per launch symbol;
    results: the outputs' stores, then per dynamic dim its lengths."""

    name: str
    inputs: list[tuple[str, MemRef, list[str]]]  # (name, type, domain)
    symbols: list[str]
    outputs: list[tuple[str, MemRef, list[str]]]  # (name, type, domain)
    # (dim, bound symbol, group dims, their extents: ints or launch symbols);
    # with several group dims, the lengths are row-major over them
    lengths: list[tuple[str, str, list[str], list]]
    udfs: list[dict] = field(default_factory=list)  # in table order, see Driver.call_udf
    grow: list[dict] = field(default_factory=list)  # {symbol, rank} per store-growth function
    # {value, dim} per growable buffer, numbered as the entry passes them to
    # pdg_grow (a memory fault names the store by this number)
    grow_stores: list[dict] = field(default_factory=list)
    # {value, op, over, location} per collective call site, numbered as the
    # entry passes them to pdg_collective_<rank> (an MPI error names it)
    collectives: list[dict] = field(default_factory=list)
    # the block of stores that take turns (arena.py): its bytes and theirs
    shared: dict = field(default_factory=lambda: {"bytes": 0, "stores": []})
    # {output, value, store} per output returned as the one-slot store it copied
    # (returned_slots.py): the output has no store of its own
    returned: list[dict] = field(default_factory=list)
    # {value, store} per value updated in place (updated_in_place.py): the
    # carrier `value` has no store of its own, it is `store`'s
    in_place: list[dict] = field(default_factory=list)
    # {input, store} per input whose buffer is a value's store (an update in
    # place whose carrier starts from it): the compiled code writes into it
    donated: list[dict] = field(default_factory=list)
    # {consumer, producer, dim, groups, location} per read checked for a
    # step of an ended sequence (loops.py), numbered as the entry passes
    # them to pdg_ended_fault (the run's message names the read)
    ended_reads: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        def memref(t: MemRef) -> dict:
            return {"shape": [None if s is DYNAMIC else s for s in t.shape], "element": t.element}

        return {
            "entry": self.name,
            "inputs": [{"name": n, "domain": d, **memref(t)} for n, t, d in self.inputs],
            "symbols": list(self.symbols),
            "outputs": [{"name": n, "domain": d, **memref(t)} for n, t, d in self.outputs],
            "lengths": [
                {"dim": d, "symbol": s, "groups": g, "extents": e} for d, s, g, e in self.lengths
            ],
            "udfs": self.udfs,
            "grow": self.grow,
            "grow_stores": self.grow_stores,
            "collectives": self.collectives,
            "shared": self.shared,
            "returned": self.returned,
            "in_place": self.in_place,
            "donated": self.donated,
            "ended_reads": self.ended_reads,
        }


class Driver(ViewEmitter, LoopEmitter, PartialSumEmitter, CollectiveEmitter):
    def __init__(
        self,
        model: LoweringModel,
        wrappers: dict[str, Wrapper],
        summing: dict[int, Node],
        in_place: dict[int, InPlace] | None = None,
    ):
        self.m = model
        self.in_place = in_place or {}  # updated_in_place.py: id(update) -> its pair
        self.carried = {id(p.carrier): p for p in self.in_place.values()}
        self.wrappers = wrappers
        self.summing = summing  # id(value with a partial store) -> the node summing it
        self.sums = {id(n.value) for n in summing.values()}
        self.w = Writer()
        self.prologue = self.w.sibling()
        self.symbols: dict[str, str] = {}  # launch symbol -> SSA
        self.buffers: dict[int, Buffer] = {}
        self.scratch: dict[tuple, tuple[str, MemRef]] = {}
        self.thread_slots: str | None = None  # SSA: the pool's threads (scratch windows)
        # partials.py: id(value) -> (its points, its chunks), SSA indices
        self.partial_chunks: dict[int, tuple[str, str]] = {}
        self.in_parallel = False  # emitting the inside of a parallel loop
        self.parallel_wrappers: set[str] = set()  # wrappers called there
        self.dynamic: dict[str, Loop] = {}  # dynamic dim -> its sequences (loops.py)
        self.active: list[Loop] = []  # the dynamic loops being emitted, outermost first
        self.udfs: list[dict] = []  # one table slot per udf call site
        self.declarations: list[str] = []
        self.uses_step = False
        self.grow_types: dict[str, tuple[int, int]] = {}  # type -> (k, rank)
        self.grow_stores: list[dict] = []  # see EntryABI.grow_stores
        self.grow_start_used = False  # a store's first steps come from the library
        self.grow_numbers: dict[int, int] = {}  # id(buffer) -> its number there
        self.side_buffers: list[Buffer] = []  # growable sizes of symbolic point dims
        self.window_functions: dict[tuple, str] = {}  # views.py: kind of window -> function
        self.rank_ssa: str | None = None  # collectives.py: this process's rank
        self.collectives: list[dict] = []  # one per collective call site
        self.ended_reads: list[dict] = []  # see EntryABI.ended_reads
        self.lifetimes = Lifetimes()  # arena.py: when each node runs
        self.candidates: list[Buffer] = []  # stores the shared block may hold
        self.arena: str | None = None  # SSA of the shared block
        self.in_block: set[int] = set()  # id(value) of the stores in it
        self.shared: dict = {"bytes": 0, "stores": []}
        self.returned: dict[int, Value] = {}  # returned_slots.py: id(output) -> its slot's value

    # --- sizes and symbols ----------------------------------------------------

    def extent_of(self, dim_name: str) -> int | str:
        dim = self.m.graph.dims[dim_name]
        if dim.worker:  # this rank's point only (collectives.py)
            return 1
        if dim.kind == "static":
            return dim.size
        if dim.kind == "launch":
            return self.symbols[dim.symbol]
        raise PassError(
            f"dim '{dim_name}' is dynamic: only a sequential dim may be dynamic",
            self.m.graph.op.location,
        )

    def symbol_value(self, name: str, point: dict[str, str], v: Value) -> str:
        if name in self.symbols:
            return self.symbols[name]
        loop = next((x for x in self.dynamic.values() if x.dim.symbol == name), None)
        # Lengths are known after the first loop over the dim, and in replays.
        if loop and (loop.replay or loop not in self.active):
            if any(g not in point for g in loop.groups):
                raise PassError(
                    f"'{v.name}' reads {name}, a per-sequence length, without the "
                    f"sequence dim(s) {', '.join(loop.groups)}",
                    v.op.location,
                )
            seq = self.sequence_index(loop, point)
            n = self.w.op(f"memref.load {loop.lengths}[{seq}] : {LENGTHS}")
            return self.w.op(f"arith.index_cast {n} : i64 to index")
        raise PassError(
            f"'{v.name}' reads the symbol {name} before it is known; a dynamic bound "
            "is known only after its loop",
            v.op.location,
        )

    def affine(self, op: str, exprs: list, v: Value, point: dict[str, str]) -> str:
        """`affine.apply|max|min` of exprs over v's dims and symbols."""
        dims = ", ".join(f"d{i}" for i in range(len(v.domain)))
        syms = ", ".join(f"s{i}" for i in range(len(v.symbols)))
        amap = f"({dims})" + (f"[{syms}]" if syms else "")
        results = ", ".join(str(e) for e in exprs)
        operands = f"({', '.join(point[d] for d in v.domain)})"
        if v.symbols:
            values = [self.symbol_value(s, point, v) for s in v.symbols]
            operands += f"[{', '.join(values)}]"
        return self.w.op(f"affine.{op} affine_map<{amap} -> ({results})>{operands}", "i")

    # --- buffers ----------------------------------------------------------------

    def allocate(self, graph_args: dict[int, str]) -> None:
        w = self.prologue
        graph = self.m.graph
        # Outputs are handed to the caller; a loop's end condition is read
        # by the loop, outside any node's lifetime.
        keep_own = {id(v) for _, v in graph.outputs}
        keep_own |= {id(graph.value(d.until)) for d in graph.dims.values() if d.until}
        for store in self.m.stores.values():
            buf = plan_buffer(
                store,
                self.m.graph.dims,
                self.m.roles,
                self.extent_of,
                self.largest,
                lambda d: self.symbols[self.m.graph.dims[d].symbol],
            )
            check_static_size(buf)
            self.buffers[id(store.value)] = buf
        # A returned slot is handed to the caller: its own allocation.
        self.returned = returned_slots(graph, self.buffers)
        keep_own |= {id(p) for p in self.returned.values()}
        # A value updated in place lives for the whole loop in the bytes of
        # the value it updates (its own allocation, not the shared block).
        for pair in self.in_place.values():
            self.buffers[id(pair.carrier)] = self.buffers[id(pair.update)]
            keep_own.add(id(pair.update))
        donated = self.donated_stores(graph_args)
        self.scoped_partials = self.scope_partials()
        for store in self.m.stores.values():
            buf = self.buffers[id(store.value)]
            if id(store.value) in self.returned or id(store.value) in self.carried:
                continue  # a view of its slot, below; or the update's store
            if id(store.value) in donated:
                buf.ssa = donated[id(store.value)]
                continue
            if shareable(buf) and id(store.value) not in keep_own:
                buf.ssa = w.fresh("store")  # defined once lifetimes are known
                self.candidates.append(buf)
                continue
            if store.kind == "input":
                buf.ssa = graph_args[id(store.value)]
                continue
            if store.kind == "partial":  # a partial sum per chunk (partials.py)
                if id(store.value) in self.scoped_partials:
                    continue  # allocated where its node runs
                chunks = self.chunk_count(store.value)
                buf.ssa = w.op(f"memref.alloc({chunks}) : {buf.type}", "store")
                continue
            sizes = []
            for (mode, size), extent in zip(buf.modes, buf.type.shape, strict=False):
                if extent is not DYNAMIC:
                    continue
                sizes.append(None if mode == "grow" else size)
            sizes += [p for p in buf.point if isinstance(p, str)]
            if buf.grow_dim is not None:
                sizes[sizes.index(None)] = self.first_capacity(store, buf, sizes)
            buf.ssa = w.op(f"memref.alloc({', '.join(sizes)}) : {buf.type}", "store")
            dynamic = buf.dynamic_point_dims
            if dynamic:
                # The sizes of each slot's symbolic dims, indexed like the
                # store (a growable one grows with it: see `side_buffers`).
                shape = buf.type.shape[: len(buf.modes)] + (len(dynamic),)
                buf.shapes_type = MemRef(shape, "index")
                extra = sizes[: sum(1 for x in shape if x is DYNAMIC)]
                buf.shapes = w.op(f"memref.alloc({', '.join(extra)}) : {buf.shapes_type}", "shapes")
                if buf.grow_dim is not None:
                    side = Buffer(
                        store.value,
                        store.kind,
                        buf.modes,
                        [len(dynamic)],
                        buf.shapes_type,
                        buf.shapes,
                        owner=buf,
                    )
                    self.side_buffers.append(side)
        for out, p in self.returned.items():
            buf, slot = self.buffers[out], self.buffers[id(p)]
            buf.ssa = w.op(slot_view(slot, buf).replace("%SLOT", slot.ssa), "store")

    def place_shared(self) -> None:
        """After the emission: the candidates whose lifetimes are known
        become views of one block (arena.py), the others get their own
        allocation."""
        w = self.prologue
        readers: dict[int, list] = {}
        for n in self.m.nodes:
            for case in n.cases:
                for read in case.reads:
                    readers.setdefault(id(read.producer), []).append((n.value, read))
        members, items = [], []
        for buf in self.candidates:
            span = self.lifetimes.interval(buf, readers.get(id(buf.value), []))
            if span is None:
                w.line(f"{buf.ssa} = memref.alloc() : {buf.type}")
                continue
            members.append(buf)
            items.append((byte_size(buf.type), *span))
        if not members:
            return
        offsets, total = place(items)
        block = f"memref<{total}xi8>"
        self.arena = w.op(f"memref.alloc() {{alignment = 64 : i64}} : {block}", "arena")
        for buf, offset in zip(members, offsets, strict=True):
            at = w.const(offset)
            w.line(f"{buf.ssa} = memref.view {self.arena}[{at}][] : {block} to {buf.type}")
        self.in_block = {id(b.value) for b in members}
        self.shared = {
            "bytes": total,
            "apart": sum(size for size, _, _ in items),  # their bytes, each on its own
            "stores": [b.value.name for b in members],
        }

    def thread_count(self) -> str:
        """The pool's thread slots (an SSA index computed in the prologue)."""
        if self.thread_slots is None:
            self.thread_slots = self.prologue.op(
                "func.call @pdg_thread_slots() : () -> index", "threads"
            )
        return self.thread_slots

    def largest(self, sizes: list) -> str:
        """The largest of ints and SSA sizes, computed in the prologue."""
        w = self.prologue
        values = [w.index(x) for x in sizes]
        best = values[0]
        for other in values[1:]:
            best = w.op(f"arith.maxsi {best}, {other} : index")
        return best

    def buffer(self, v: Value) -> Buffer:
        return self.buffers[id(v)]

    # --- nodes ------------------------------------------------------------------

    def run_node(self, node: Node, point: dict[str, str]) -> None:
        """Emits `node` at every coordinate of its dims not fixed by `point`
        (loops over parallel dims), guarded by its sequence being alive."""
        w = self.w
        v = node.value
        if id(v) in self.sums:
            self.sum_partials(node, point)
            return
        free = [d for d in v.domain if d not in point]
        if id(v) in self.summing:  # its own parallel loop, over chunks (partials.py)
            self.run_partials(node, free, point)
            return
        # Points are independent: one parallel loop over them all, which the
        # thread pool (pdg.lowering.threads) shares out. Host callbacks stay
        # on the calling thread, in order.
        if free and all(case.udf is None and case.collective is None for case in node.cases):
            self.parallel_loop([node], free, point)
            return
        point = dict(point)
        for d in free:
            point[d] = w.fresh(d)
            extent = w.index(self.extent_of(d))
            w.open(f"scf.for {point[d]} = {w.const(0)} to {extent} step {w.const(1)} {{")
        self.run_point(node, point)
        for _ in free:
            w.close()

    def parallel_loop(self, nodes: list[Node], free: list[str], point: dict[str, str]) -> None:
        """One scf.parallel over the `free` dims whose body runs `nodes` in
        order at its point."""
        w = self.w
        point = dict(point)
        for d in free:
            point[d] = w.fresh(d)
        extents = ", ".join(w.index(self.extent_of(d)) for d in free)
        zeros = ", ".join([w.const(0)] * len(free))
        ones = ", ".join([w.const(1)] * len(free))
        ivs = ", ".join(point[d] for d in free)
        w.open(f"scf.parallel ({ivs}) = ({zeros}) to ({extents}) step ({ones}) {{")
        self.in_parallel = True
        for n in nodes:
            self.run_point(n, point)
        self.in_parallel = False
        w.line("scf.reduce")
        w.close()

    def run_point(self, node: Node, point: dict[str, str]) -> None:
        """`node` at `point`, all of its dims bound: while its sequence is
        alive (a node over a sequence runs only while it does)."""
        opened = 0
        for loop in self.active:
            if loop.groups and all(g in node.value.domain for g in loop.groups):
                self.w.open(f"scf.if {self.sequence_guard(loop, point)} {{")
                opened += 1
        self.select_case(node, node.cases, point)
        for _ in range(opened):
            self.w.close()

    # --- nodes sharing a parallel loop ------------------------------------------
    # Each parallel loop is a fork and a barrier of the thread pool; in a
    # step of a generation loop, a node's work per point is a few small
    # products, so one loop per node spends much of the step waiting. A run
    # of consecutive nodes over the same free dims that read one another
    # only at their own point shares one loop: each thread runs the whole
    # run at its points, in schedule order.

    def run_nodes(self, nodes: list[Node], point: dict[str, str]) -> None:
        """`nodes` in order, consecutive ones sharing a parallel loop where
        they can."""
        run: list[Node] = []
        # An output returned as its slot has nothing to compute.
        nodes = [n for n in nodes if id(n.value) not in self.returned]
        for n in nodes:
            if run and self.joins(run, n, point):
                run.append(n)
                continue
            if run:
                self.lifetimes.mark(m.value for m in run)
                self.parallel_loop(run, self.shared_dims(run[0], point), point)
            run = [n] if self.shared_dims(n, point) else []
            if not run:
                self.lifetimes.mark([n.value])
                self.run_node(n, point)
        if run:
            self.lifetimes.mark(m.value for m in run)
            self.parallel_loop(run, self.shared_dims(run[0], point), point)

    def shared_dims(self, node: Node, point: dict[str, str]) -> list[str]:
        """The dims of the parallel loop a node may share; none if it runs
        no parallel loop or needs one of its own (partial sums, a host
        callback)."""
        v = node.value
        if id(v) in self.sums or id(v) in self.summing:
            return []
        if any(case.udf is not None or case.collective is not None for case in node.cases):
            return []
        return [d for d in v.domain if d not in point]

    def joins(self, run: list[Node], node: Node, point: dict[str, str]) -> bool:
        """Whether `node` may run in the loop of `run`: the same dims, and
        no read between it and a member at another point of them (another
        thread's point, computed or overwritten at the same time)."""
        free = self.shared_dims(node, point)
        if not free or free != self.shared_dims(run[0], point):
            return False
        members = {id(n.value) for n in run}
        between = [r for case in node.cases for r in case.reads if id(r.producer) in members]
        between += [
            r for n in run for case in n.cases for r in case.reads if r.producer is node.value
        ]
        for read in between:
            at = dict(zip(read.producer.domain, read.entries, strict=True))
            if any(at.get(d) != ("point", d) for d in free):
                return False
        return True

    def select_case(self, node: Node, cases: list[Case], point: dict[str, str]) -> None:
        if not cases:
            return
        case, rest = cases[0], cases[1:]
        if not case.constraints:
            self.call(node, case, point)
            return
        w = self.w
        holds = None
        coords = self.coordinates(node.value, point)
        for expr, is_eq in case.constraints:
            value = self.affine("apply", [expr], node.value, coords)
            test = w.op(f"arith.cmpi {'eq' if is_eq else 'sge'}, {value}, {w.const(0)} : index")
            holds = test if holds is None else w.op(f"arith.andi {holds}, {test} : i1")
        w.open(f"scf.if {holds} {{")
        self.call(node, case, point)
        if rest:
            w.close("} else {")
            w.depth += 1
            self.select_case(node, rest, point)
        w.close()

    def call(self, node: Node, case: Case, point: dict[str, str]) -> None:
        if case.udf is not None:
            self.call_udf(node, case, point)
            return
        if case.collective is not None:
            self.call_collective(node, case, point)
            return
        w = self.w
        v = node.value
        carried = self.carried.get(id(v))
        if carried is not None and node.cases[carried.copy_case] is case:
            return  # the slot holds the update's previous step already
        if carried is not None and carried.donor and node.cases[carried.donor_case] is case:
            return  # the slot is the input's buffer
        pair = self.in_place.get(id(v))
        from_slot = pair.operands if pair else ()
        wrapper = self.wrappers[case.body + in_place_suffix(from_slot)]
        if self.in_parallel:
            self.parallel_wrappers.add(wrapper.name)
        # The operands an update in place reads from its own slot are not
        # passed: the wrapper reads the destination.
        reads = [r for k, r in enumerate(case.reads) if k not in from_slot]
        args = [self.read_view(read, point, v, wrapper.params[i]) for i, read in enumerate(reads)]
        coords = self.coordinates(v, point)
        args += [coords[d] for d in v.domain]
        buf = self.buffer(v)
        sizes = ", ".join(["index"] * wrapper.sizes)
        signature = f"({', '.join(wrapper.params)}) -> ({sizes})"
        if buf.kind == "partial":  # into its chunk's sum (partials.py)

            def into(dest: str, dest_t: MemRef) -> None:
                at = [*args, cast(w, dest, dest_t, wrapper.params[-1])]
                bind = f"{w.fresh('r')}:{wrapper.sizes} = " if wrapper.sizes else ""
                w.line(f"{bind}func.call {symbol(wrapper.name)}({', '.join(at)}) : {signature}")

            self.call_into_partial(buf, into)
            return
        slot = self.slot_of(buf, point)
        args.append(self.slot_view(buf, slot, wrapper.params[-1]))
        results = w.fresh("r")
        bind = f"{results}:{wrapper.sizes} = " if wrapper.sizes else ""
        w.line(f"{bind}func.call {symbol(wrapper.name)}({', '.join(args)}) : {signature}")
        # The sizes of the result's symbolic dims, for whoever reads the slot.
        for k in range(wrapper.sizes):
            at = ", ".join([*slot, w.const(k)])
            w.line(f"memref.store {results}#{k}, {buf.shapes}[{at}] : {buf.shapes_type}")

    def call_udf(self, node: Node, case: Case, point: dict[str, str]) -> None:
        """A call to `pdg_<graph>_udf_<k>`: the runtime's host callback in table slot
        k gets the inputs' and the result slot's descriptors and the point's
        coordinates. The trampolines are C (pdg.lowering.trampolines)."""
        w = self.w
        v = node.value
        buf = self.buffer(v)
        if buf.dynamic_point_dims:
            raise PassError(
                f"udf '{case.udf}' returns a symbolic shape; compiled udfs return a fixed "
                "point shape",
                v.op.location,
            )
        k = len(self.udfs)
        args, types, specs = [], [], []
        for read in case.reads:
            rank = sum(1 for e in read.affine if e[0] == "slice") + len(read.producer.shape)
            to = MemRef((DYNAMIC,) * rank, read.producer.element).fully_dynamic()
            args.append(self.read_view(read, point, v, str(to)))
            types.append(str(to))
            specs.append({"rank": rank, "element": read.producer.element})
        out = MemRef((DYNAMIC,) * len(buf.point), buf.type.element).fully_dynamic()
        args.append(self.slot_view(buf, self.slot_of(buf, point), str(out)))
        types.append(str(out))
        coords = self.coordinates(v, point)
        args += [coords[d] for d in v.domain]
        types += ["index"] * len(v.domain)
        name = f"{self.prefix}_udf_{k}"
        w.line(f"func.call @{name}({', '.join(args)}) : ({', '.join(types)}) -> ()")
        self.declarations.append(
            f"func.func private @{name}({', '.join(types)}) attributes {{llvm.emit_c_interface}}"
        )
        self.udfs.append(
            {
                "symbol": name,
                "name": case.udf,
                "value": v.name,
                "domain": list(v.domain),
                "args": specs,
                "result": {"shape": list(v.shape), "element": v.element},
            }
        )

    def donated_stores(self, graph_args: dict[int, str]) -> dict[int, str]:
        """id(update) -> its store as a view of the input its carrier
        starts from (updated_in_place.py: the input's buffer is written)."""
        out = {}
        for pair in self.in_place.values():
            if pair.donor is None:
                continue
            buf, given = self.buffers[id(pair.update)], self.buffers[id(pair.donor)]
            groups = slot_groups(len(buf.modes), len(given.type.shape))
            shape = ", ".join(str(x) for x in buf.type.shape)
            out[id(pair.update)] = self.prologue.op(
                f"memref.expand_shape {graph_args[id(pair.donor)]} {groups} "
                f"output_shape [{shape}] : {given.type} into {buf.type}",
                "donated",
            )
        return out

    def check_in_place(self) -> None:
        """Every reader of a value updated in place ran before its update,
        in the order just emitted (updated_in_place.py chose the pairs by
        the schedule's order, which this order must follow)."""
        ticks = self.lifetimes.ticks
        readers: dict[int, list] = {id(p.carrier): [] for p in self.in_place.values()}
        for r in self.m.graph.reads:  # one pass: a model has a weight and two moments per layer
            if id(r.producer) in readers:
                readers[id(r.producer)].append(r.consumer)
        for pair in self.in_place.values():
            update = ticks[id(pair.update)][0]
            late = [
                c.name
                for c in readers[id(pair.carrier)]
                if c is not pair.update and ticks.get(id(c), (update,))[0] >= update
            ]
            if late:
                raise PassError(
                    f"internal error: '{pair.update.name}' is written over "
                    f"'{pair.carrier.name}' before {', '.join(late)} read it",
                    pair.update.op.location,
                )

    # --- phases -------------------------------------------------------------------

    def run_groups(self, nodes: list[Node], level: int, point: dict[str, str]) -> None:
        """`nodes` by their group at `level` of nesting, in execution order:
        a whole computation's nodes one after the other, a nest as a loop
        over its dim whose steps run its members (or their groups one level
        down)."""
        groups: dict[int, list[Node]] = {}
        for n in nodes:
            # A nest's members without groups of their own run at each step,
            # as one whole computation.
            groups.setdefault(n.path[level] if level < len(n.path) else 0, []).append(n)
        for group, members in sorted(groups.items()):
            if group % 2 == 0:
                if point:  # inside a loop: its step is guarded already
                    self.run_nodes(members, point)
                else:
                    # Nodes outside loops grow no store: nothing to carry.
                    self.unless_stopped(lambda m=members: self.run_nodes(m, point), carry=False)
                continue

            def body(at: dict[str, str], members=members) -> None:
                self.run_groups(members, level + 1, at)

            dim = self.nest_dim(members, level)
            computed = {id(n.value) for n in members}
            nest = self.lifetimes.enter(dim.name)
            self.run_loop(dim, point, body, dim.name in members[0].reverse, computed)
            self.lifetimes.leave(nest)

    def nest_dim(self, nodes: list[Node], level: int) -> Dim:
        """The sequential dim the nodes of a nest at `level` step along."""
        names = {n.loops[level] for n in nodes if len(n.loops) > level}
        if len(names) != 1:
            raise PassError(
                f"the loop nest has {len(names)} dims ({', '.join(sorted(names))}); "
                "run pdg-schedule again after changing the graph",
                self.m.graph.op.location,
            )
        return self.m.graph.dims[names.pop()]

    # --- the function -------------------------------------------------------------

    @property
    def prefix(self) -> str:
        """pdg_<graph> as a C identifier: the entry's name and the stem of
        the symbols the generated C defines (pdg.lowering.trampolines)."""
        return "pdg_" + c_identifier(self.m.graph.name)

    def first_capacity(self, store: Store, buf: Buffer, sizes: list[str | None]) -> str:
        """The steps growable `buf` starts the call with: GROW_FROM (at most
        the dim's max), or what an earlier call grew it to where that fits
        under the memory limit (pdg_grow_start), so the stores of a loop of
        calls grow in its first call only."""
        w = self.prologue
        dim = self.m.graph.dims[store.value.domain[buf.grow_dim]]
        cap = GROW_FROM if dim.size is None else min(GROW_FROM, dim.size)
        fixed, symbolic = ELEMENT_BYTES[buf.type.element], []
        dynamic = iter(sizes)
        for j, extent in enumerate(buf.type.shape):
            size = next(dynamic) if extent is DYNAMIC else extent
            if j != buf.grow_dim:
                if isinstance(size, int):
                    fixed *= size
                else:
                    symbolic.append(size)
        step_bytes = w.const(fixed)
        for size in symbolic:
            step_bytes = w.op(f"arith.muli {step_bytes}, {size} : index")
        self.grow_start_used = True
        return w.op(
            f"func.call @{grow_start_symbol(self.prefix)}({w.const(self.grow_number(buf))}, "
            f"{w.const(cap)}, {step_bytes}) : (index, index, index) -> index"
        )

    def grow_symbol(self, k: int) -> str:
        return f"{self.prefix}_grow_{k}"

    def emit(self) -> tuple[str, EntryABI]:
        graph = self.m.graph
        params, args = [], {}
        inputs = [v for v in graph.values if v.kind == "input"]
        for d in graph.dims.values():
            if d.kind == "launch" and d.symbol not in self.symbols:
                self.symbols[d.symbol] = f"%sym_{d.symbol}"
        for k, v in enumerate(inputs):  # input names may hold any character
            args[id(v)] = f"%in{k}_{c_identifier(v.name)}"
        self.allocate(args)
        for v in inputs:
            params.append(f"{args[id(v)]}: {self.buffer(v).type}")
        params += [f"{ssa}: index" for ssa in self.symbols.values()]
        # The stores are allocated (the prologue comes first): from here on,
        # an allocation that fails cannot be skipped (pdg/runtime.h).
        running = self.w.op("memref.get_global @pdg_running : memref<i8>")
        self.w.line(f"memref.store {self.w.const(1, 'i8')}, {running}[] : memref<i8>")
        self.run_groups(self.m.nodes, 0, {})
        self.check_in_place()
        self.place_shared()
        # The lengths of the dynamic dims looped over at the top (inside a
        # loop, a dim's lengths are those of one step of it).
        top = [loop for loop in self.dynamic.values() if not loop.enclosing]

        outputs = []
        returned = set()
        for name, v in graph.outputs:
            buf = self.buffer(v)
            if v.kind == "input":
                raise PassError(
                    f"output '{name}' is the input '{v.name}'; return a node instead",
                    v.op.location,
                )
            if buf.dynamic_point_dims:
                raise PassError(
                    f"output '{name}' has a symbolic point shape; the compiled path returns "
                    "outputs of fixed point shape so far",
                    v.op.location,
                )
            nested = [x.dim.name for x in self.dynamic.values() if x.enclosing]
            if any(d in nested for d in v.domain):
                raise PassError(
                    f"output '{name}' is over a dynamic dim looped over inside another loop "
                    f"({', '.join(d for d in v.domain if d in nested)}); the compiled path "
                    "returns such values reduced (sum or gather them over the dim first)",
                    v.op.location,
                )
            outputs.append((name, buf))
            returned.add(id(v))
            if id(v) in self.returned:  # its slot goes with it
                returned.add(id(self.returned[id(v)]))
        dims = self.m.graph.dims
        lengths = [
            (x.dim.name, x.dim.symbol, list(x.groups), [dims[g].bound for g in x.groups])
            for x in top
        ]
        w = self.w
        # A store shared by a value updated in place is listed twice.
        donors = {id(p.update) for p in self.in_place.values() if p.donor}
        scoped = self.scoped_partials  # freed after their sum
        for buf in {id(b): b for b in self.buffers.values()}.values():
            if buf.kind != "input" and id(buf.value) not in returned | donors | scoped:
                if id(buf.value) not in self.in_block:
                    w.line(f"memref.dealloc {buf.ssa} : {buf.type}")
            if buf.shapes:
                w.line(f"memref.dealloc {buf.shapes} : {buf.shapes_type}")
        if self.arena is not None:
            w.line(f"memref.dealloc {self.arena} : memref<{self.shared['bytes']}xi8>")
        for name, stype in self.scratch.values():
            w.line(f"memref.dealloc {name} : {stype}")
        for loop in self.dynamic.values():
            w.line(f"memref.dealloc {loop.alive} : memref<?xi8>")
            if loop not in top:
                w.line(f"memref.dealloc {loop.lengths} : {LENGTHS}")
        values = [b.ssa for _, b in outputs] + [x.lengths for x in top]
        types = [str(b.type) for _, b in outputs] + [str(LENGTHS)] * len(top)
        w.line(f"return {', '.join(values)} : {', '.join(types)}" if values else "return")
        name = self.prefix
        header = (
            f"func.func @{name}({', '.join(params)}) -> ({', '.join(types)}) "
            "attributes {llvm.emit_c_interface} {"
        )
        text = "\n".join([header, self.prologue.text(), w.text(), "}", *self.declarations])
        if self.grow_start_used:  # pdg.lowering.trampolines defines it
            text += (
                f"\nfunc.func private @{grow_start_symbol(self.prefix)}(index, index, index) "
                "-> index"
            )
        for t, (k, _) in self.grow_types.items():
            # Generated per memref type (pdg.lowering.trampolines).
            text += (
                f"\nfunc.func private @{self.grow_symbol(k)}({t}, index, index, index, index) "
                f"-> {t} attributes {{llvm.emit_c_interface}}"
            )
        abi = EntryABI(
            name,
            [(v.name, self.buffer(v).type, list(v.domain)) for v in inputs],
            list(self.symbols),
            [(n, b.type, list(b.value.domain)) for n, b in outputs],
            lengths,
            self.udfs,
            [{"symbol": self.grow_symbol(k), "rank": r} for k, r in self.grow_types.values()],
            self.grow_stores,
            self.collectives,
            self.shared,
            [
                {"output": name, "value": v.name, "store": p.name}
                for name, v in graph.outputs
                if (p := self.returned.get(id(v))) is not None
            ],
            [{"value": p.carrier.name, "store": p.update.name} for p in self.in_place.values()],
            [
                {"input": p.donor.name, "store": p.update.name}
                for p in self.in_place.values()
                if p.donor
            ],
            self.ended_reads,
        )
        return text, abi


# Globals and functions of pdg's C runtime (pdg/runtime.h), declared once a
# module.
GLOBALS = {
    "pdg_abort": "memref.global @pdg_abort : memref<i8>",  # nonzero: the run stops
    "pdg_running": "memref.global @pdg_running : memref<i8>",  # 1 once the stores exist
    "pdg_step": "memref.global @pdg_step : memref<i64>",  # the loop's step
    # the threads a parallel loop may run on, and this thread's number in it
    "pdg_thread_slots": "func.func private @pdg_thread_slots() -> index",
    "pdg_thread_index": "func.func private @pdg_thread_index() -> index",
    # this process's rank in the communicator the run was given (0 without one)
    "pdg_world_rank": "func.func private @pdg_world_rank() -> index",
}


def driver_text(
    model: LoweringModel,
    wrappers: dict[str, Wrapper],
    summing: dict[int, Node],
    in_place: dict[int, InPlace] | None = None,
) -> tuple[str, EntryABI, set[str], set[str]]:
    """The entry's text, its ABI, the support globals it uses, and the
    wrappers it calls inside its parallel loops; `summing`: see
    partials.summing_nodes; `in_place`: updated_in_place.find_in_place."""
    driver = Driver(model, wrappers, summing, in_place)
    text, abi = driver.emit()
    used = {"pdg_abort", "pdg_running"}
    if driver.uses_step:
        used.add("pdg_step")
    if driver.thread_slots is not None:
        used |= {"pdg_thread_slots", "pdg_thread_index"}
    if driver.rank_ssa is not None:
        used.add("pdg_world_rank")
    return text, abi, used, driver.parallel_wrappers


def slot_shape(model: LoweringModel, v: Value) -> list:
    """The shape of v's slots as the wrapper's destination: ints, or None
    where only the symbol values tell."""
    dims = model.graph.dims

    def extent(d: str) -> int | str:  # the SSA name of a launch symbol is not needed here
        return dims[d].size if dims[d].kind == "static" else "%unknown"

    buf = plan_buffer(model.store(v), dims, model.roles, extent)
    return [p if isinstance(p, int) else None for p in buf.point]
