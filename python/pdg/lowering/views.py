"""Views of the stores for the entry function (part of the Driver): the
slot a node writes, the region a read takes (a point, a slice, or a window
that wraps around its circular buffer and is copied into a scratch
buffer), and the actual sizes of symbolic point dims."""

from __future__ import annotations

from pdg.analysis.graph import Read, Value
from pdg.passes.registry import PassError

from .buffers import Buffer
from .text import DYNAMIC, MemRef, Writer, cast, subview


class ViewEmitter:
    """Mixed into Driver: uses its writer `w`, `prologue`, `scratch`,
    `buffer()`, `affine()` and `thread_count()`."""

    def index_of(self, buf: Buffer, j: int, coord: str) -> str:
        mode, size = buf.modes[j]
        if mode == "zero":
            return self.w.const(0)
        if mode == "mod":
            return self.w.op(f"affine.apply affine_map<(d0) -> (d0 mod {size})>({coord})", "i")
        return coord

    def slot_of(self, buf: Buffer, point: dict[str, str]) -> list[str]:
        """The store index of the slot at `point`."""
        return [self.index_of(buf, j, point[d]) for j, d in enumerate(buf.value.domain)]

    def slot_view(self, buf: Buffer, slot: list[str], to_type: str) -> str:
        """The slot of `buf` at store index `slot`, as `to_type`."""
        offsets = list(slot)
        n = len(offsets)
        sizes = [1] * n + list(buf.point)
        view, vtype = subview(
            self.w,
            buf.ssa,
            buf.type,
            offsets + [0] * len(buf.point),
            sizes,
            [False] * n + [True] * len(buf.point),
        )
        return cast(self.w, view, vtype, to_type)

    def point_sizes(self, buf: Buffer, slot: list[str]) -> list:
        """Actual sizes of the value's point dims in the slot at `slot`."""
        sizes: list = []
        for k, d in enumerate(buf.value.shape):
            if d is not None:
                sizes.append(d)
                continue
            pos = self.w.const(buf.dynamic_point_dims.index(k))
            sizes.append(
                self.w.op(
                    f"memref.load {buf.shapes}[{', '.join([*slot, pos])}] : {buf.shapes_type}"
                )
            )
        return sizes

    def slice_bounds(self, entry, consumer: Value, point: dict[str, str]) -> tuple[str, str]:
        """The SSA bounds [lo, hi) of a read's ("slice", lbs, ubs) entry."""
        _, lbs, ubs = entry
        lo = self.affine("max" if len(lbs) > 1 else "apply", lbs, consumer, point)
        hi = self.affine("min" if len(ubs) > 1 else "apply", ubs, consumer, point)
        return lo, hi

    def read_view(self, read: Read, point: dict[str, str], consumer: Value, to_type: str) -> str:
        """The region `read` takes of its producer's store, as `to_type`."""
        self.check_sequences_read(read, point, consumer)
        buf = self.buffer(read.producer)
        offsets, sizes, kept = [], [], []
        slot = []  # the store index of the (first) slot read, for its sizes
        wrap = None
        for j, entry in enumerate(read.affine):
            if entry[0] == "point":
                c = self.affine("apply", [entry[1]], consumer, point)
                offsets.append(self.index_of(buf, j, c))
                slot.append(offsets[-1])
                sizes.append(1)
                kept.append(False)
                continue
            lo, hi = self.slice_bounds(entry, consumer, point)
            n = self.w.op(f"arith.subi {hi}, {lo} : index", "n")
            mode, size = buf.modes[j]
            if mode in ("mod", "zero"):
                if wrap is not None:
                    raise PassError(
                        f"'{consumer.name}' slices two circular dims of "
                        f"'{read.producer.name}'; the lowering supports one",
                        consumer.op.location,
                    )
                wrap = (j, lo, n, size)
            offsets.append(lo)
            if buf.dynamic_point_dims:
                slot.append(self.index_of(buf, j, lo))
            sizes.append(n)
            kept.append(True)
        # A slice stacks its slots into one tensor: they all have the shape
        # of the first (the interpreter refuses to stack unequal ones).
        point_sizes = (
            self.point_sizes(buf, slot) if buf.dynamic_point_dims else list(buf.value.shape)
        )
        offsets += [0] * len(point_sizes)
        sizes += point_sizes
        kept += [True] * len(point_sizes)
        if wrap is None:
            view, vtype = subview(self.w, buf.ssa, buf.type, offsets, sizes, kept)
            return cast(self.w, view, vtype, to_type)
        return self.wrapped_view(buf, wrap, offsets, sizes, kept, to_type)

    def wrapped_view(self, buf, wrap, offsets, sizes, kept, to_type: str) -> str:
        """A slice along a circular dim: a view when it does not wrap past
        the end of the buffer, else its two pieces copied in order into a
        scratch buffer of the window's size. Emitted once per kind of
        window (types and static sizes) as a function that every such read
        calls: the layers of a model read their windows alike, and copies
        written out again in each would make the step's code, and LLVM's
        time on it, grow with depth."""
        j, _lo, _n, size = wrap
        slots, slots_type = self.scratch_for(buf, j)

        def pattern(xs):
            return tuple(x if isinstance(x, int) else None for x in xs)

        key = (str(buf.type), str(slots_type), j, size, pattern(offsets), pattern(sizes))
        key += (tuple(kept), to_type)
        name = self.window_functions.get(key)
        if name is None:
            name = f"{self.prefix}_window_{len(self.window_functions)}"
            self.window_functions[key] = name
            self.declarations.append(
                _window_function(name, buf.type, slots_type, wrap, offsets, sizes, kept, to_type)
            )
        dynamic = [x for x in [*offsets, *sizes] if isinstance(x, str)]
        args = ", ".join([buf.ssa, slots, *dynamic])
        types = ", ".join([str(buf.type), str(slots_type), *["index"] * len(dynamic)])
        return self.w.op(f"func.call @{name}({args}) : ({types}) -> {to_type}", "win")

    def scratch_for(self, buf: Buffer, j: int) -> tuple[str, MemRef]:
        """The scratch of `buf`'s circular dim `j`: one window per thread of
        the pool (pdg_thread_slots), indexed by pdg_thread_index."""
        key = (id(buf.value), j)
        if key not in self.scratch:
            size = buf.modes[j][1]
            shape = (DYNAMIC, size, *(p if isinstance(p, int) else DYNAMIC for p in buf.point))
            stype = MemRef(shape, buf.type.element)
            dyn = [self.thread_count(), *(p for p in buf.point if isinstance(p, str))]
            name = self.prologue.op(f"memref.alloc({', '.join(dyn)}) : {stype}", "scratch")
            self.scratch[key] = (name, stype)
        return self.scratch[key]


def _window_function(
    name: str, buf_type: MemRef, slots_type: MemRef, wrap, offsets, sizes, kept, to_type: str
) -> str:
    """`func.func @name(%buf, %scratch, dynamic offsets and sizes...)
    -> to_type`: the window of wrapped_view, its static sizes built in."""
    j, _lo, _n, size = wrap
    w = Writer(2)
    # One parameter per position that is not a constant, in the order the
    # callers pass them: callers of one kind may repeat a value or not.
    params: list[str] = []

    def parameter(x):
        if isinstance(x, int):
            return x
        params.append(f"%p{len(params)}")
        return params[-1]

    offsets = [parameter(x) for x in offsets]
    sizes = [parameter(x) for x in sizes]
    lo, n = offsets[j], sizes[j]
    start = w.op(f"affine.apply affine_map<(d0) -> (d0 mod {size})>({w.index(lo)})", "i")
    end = w.op(f"arith.addi {start}, {w.index(n)} : index")
    fits = w.op(f"arith.cmpi sle, {end}, {w.const(size)} : index")
    result = w.fresh("win")
    w.open(f"{result} = scf.if {fits} -> ({to_type}) {{")
    at = list(offsets)
    at[j] = start
    view, vtype = subview(w, "%buf", buf_type, at, sizes, kept)
    w.line(f"scf.yield {cast(w, view, vtype, to_type)} : {to_type}")
    w.close("} else {")
    w.depth += 1
    point_sizes = [s for s, k in zip(sizes, kept, strict=True) if k][1:]
    zeros = [0] * len(point_sizes)
    # This thread's own scratch: points of a parallel loop wrap at once.
    thread = w.op("func.call @pdg_thread_index() : () -> index", "thread")
    scratch, stype = subview(
        w,
        "%scratch",
        slots_type,
        [thread, 0, *zeros],
        [1, size, *point_sizes],
        [False] + [True] * (1 + len(point_sizes)),
    )
    first = w.op(f"arith.subi {w.const(size)}, {start} : index")
    rest = w.op(f"arith.subi {w.index(n)}, {first} : index")
    for src_at, count, dst_at in ((start, first, 0), (0, rest, first)):
        at = list(offsets)
        at[j] = src_at
        piece = list(sizes)
        piece[j] = count
        src, src_t = subview(w, "%buf", buf_type, at, piece, kept)
        dst, dst_t = subview(
            w,
            scratch,
            stype,
            [dst_at, *zeros],
            [count, *point_sizes],
            [True] * (1 + len(point_sizes)),
        )
        w.line(f"linalg.copy ins({src} : {src_t}) outs({dst} : {dst_t})")
    view, vtype = subview(
        w, scratch, stype, [0, *zeros], [n, *point_sizes], [True] * (1 + len(point_sizes))
    )
    w.line(f"scf.yield {cast(w, view, vtype, to_type)} : {to_type}")
    w.close()
    w.line(f"return {result} : {to_type}")
    signature = ", ".join(
        [f"%buf: {buf_type}", f"%scratch: {slots_type}", *(f"{p}: index" for p in params)]
    )
    return "\n".join(
        [
            f"func.func private @{name}({signature}) -> {to_type} "
            'attributes {passthrough = ["noinline"]} {',
            w.text(),
            "}",
        ]
    )
