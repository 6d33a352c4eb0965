"""Stores as memrefs: the shape of each value's buffer and how a coordinate
along each of its dims becomes an index.

Per domain dim a buffer is indexed by one of:
  coord  the coordinate itself (parallel dims, full stores, inputs)
  zero   always 0 (a point store keeps one step)
  mod    the coordinate modulo the window or block size (circular buffer)
  grow   the coordinate, in a buffer whose capacity doubles as steps come
         (a dynamic dim's full store)
A `partial` store has no dims of the domain: one slot per chunk of its
points (partials.py).
Point dims of symbolic size (`?`) get a slot of the largest size the value
can take; the actual sizes of each slot live in a side buffer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pdg.analysis.graph import Dim, Value
from pdg.analysis.storage import Store
from pdg.passes.registry import PassError

from .text import DYNAMIC, MemRef

GROW_FROM = 16  # first capacity of a growable store (or the dim's max if smaller)


@dataclass
class Buffer:
    value: Value
    kind: str
    modes: list[tuple[str, int | str | None]]  # per domain dim: (mode, size)
    point: list[int | str]  # slot size per point dim: int, or an SSA index
    type: MemRef
    ssa: str = ""  # the memref now (growable stores change in the loop)
    shapes: str | None = None  # side buffer of dynamic point sizes
    shapes_type: MemRef | None = None
    owner: Buffer | None = None  # for a growable side buffer: whose sizes it holds

    def set_ssa(self, ssa: str) -> None:
        """The memref now (growable stores change in the loop)."""
        self.ssa = ssa
        if self.owner is not None:
            self.owner.shapes = ssa

    @property
    def dynamic_point_dims(self) -> list[int]:
        return [k for k, d in enumerate(self.value.shape) if d is None]

    @property
    def grow_dim(self) -> int | None:
        for j, (mode, _) in enumerate(self.modes):
            if mode == "grow":
                return j
        return None


def _element(v: Value) -> str:
    return v.element


def plan_buffer(
    store: Store,
    dims: dict[str, Dim],
    roles: dict[str, str],
    extent_of,
    largest=None,
    world=None,
) -> Buffer:
    """The buffer of `store`. `extent_of(name)` gives a parallel or full
    dim's size: an int, or the SSA name of its launch symbol;
    `largest(sizes)` the largest of several such sizes (an SSA name when
    one is; None: unknown here); `world(dim)` a worker dim's world size
    (whose extent is 1: each rank stores its own point), e.g. the rows of
    an all-gather's slot (None: unknown here)."""
    v = store.value
    if store.kind == "partial":  # one point per chunk of its points (partials.py)
        point = [int(d) for d in v.shape]
        return Buffer(v, "partial", [], point, MemRef((DYNAMIC, *point), v.element))
    modes: list[tuple[str, int | str | None]] = []
    for d, extent in zip(v.domain, store.extents, strict=True):
        dim = dims[d]
        if roles[d] == "parallel" or store.kind == "input" or extent == dim.bound:
            if dim.kind == "dynamic" and roles[d] == "sequential":
                modes.append(("grow", None))
            else:
                modes.append(("coord", extent_of(d)))
        elif re.fullmatch(r"\d+", extent):
            size = int(extent)
            modes.append(("mod", size) if size > 1 else ("zero", 1))
        else:
            raise PassError(
                f"store extent '{extent}' of '{v.name}' along '{d}' is neither the dim's "
                "bound nor a constant; the lowering cannot size it",
                v.op.location,
            )
    point: list[int | str] = []
    for k, factor in enumerate(store.point_factors):
        if v.shape[k] is not None:
            point.append(v.shape[k])
        elif re.fullmatch(r"\d+", factor):
            point.append(int(factor))
        elif factor.startswith("max("):  # several bounds reach this dim
            parts = [p.strip() for p in factor[4:-1].split(",")]
            sizes = [
                int(p) if p.isdigit() else _symbol_max(p, dims, extent_of, v, world) for p in parts
            ]
            if all(isinstance(x, int) for x in sizes):
                point.append(max(sizes))
            else:
                point.append(largest(sizes) if largest else "%unknown")
        else:
            point.append(_symbol_max(factor, dims, extent_of, v, world))
    shape = []
    for mode, size in modes:
        if mode in ("coord",):
            shape.append(size if isinstance(size, int) else DYNAMIC)
        elif mode == "grow":
            shape.append(DYNAMIC)
        else:
            shape.append(size)
    shape += [p if isinstance(p, int) else DYNAMIC for p in point]
    return Buffer(v, store.kind, modes, point, MemRef(tuple(shape), _element(v)))


def _symbol_max(symbol: str, dims: dict[str, Dim], extent_of, v: Value, world=None) -> int | str:
    """A point dim bounded by a dim's symbol: the launch value (the world's
    size for a worker dim), or a dynamic dim's declared max."""
    for dim in dims.values():
        if dim.symbol != symbol:
            continue
        if dim.worker:
            return world(dim.name) if world else "%unknown"
        if dim.kind == "launch":
            return extent_of(dim.name)
        if dim.kind == "dynamic" and dim.size is not None:
            return dim.size
    raise PassError(
        f"the point shape of '{v.name}' is bounded by '{symbol}', which has no "
        "maximum; give the dim a `max` so the lowering can size its slots",
        v.op.location,
    )


LARGEST_STATIC = 1 << 40  # elements: past this a memref type's size computation overflows


def check_static_size(buf: Buffer) -> None:
    """Refuses a store whose static sizes alone exceed what a memref can
    describe (MLIR asserts on the overflow in its stride computation)."""
    count = 1
    for d in buf.type.shape:
        if d is not DYNAMIC:
            count *= max(d, 1)
    if count > LARGEST_STATIC:
        raise PassError(
            f"the store of '{buf.value.name}' would hold {count} elements ({buf.type}); "
            "use a launch dim (sized when run) or smaller static sizes",
            buf.value.op.location,
        )
