"""One block for the stores whose lifetimes do not overlap (part of the
Driver).

Every store used to be its own allocation, live for the whole run. A
training program keeps many parameter-sized stores that each live for a
short part of an iteration (a gradient's partial and reduced sums, its
clipped and scaled copies, the moments' updates, a transposed weight):
they can take turns in the same bytes. The Driver notes, while it emits
the entry, when each node runs (a `tick` per emission unit: a node, or a
run of nodes sharing one parallel loop, whose threads run its members at
once) and the span of ticks of every loop nest. After the emission:

- a store's lifetime is the ticks from its node to its last reader's,
  widened to the whole of a nest that one of them runs in and the other
  does not (a nest's body runs again at every step), and to the whole of a
  nest along whose dim the store is read at another step than its own
  (window stores, a read of the step before);
- stores of a fixed size (no launch symbol, no growth) that are neither
  inputs, outputs, partial sums nor a loop's end condition (read by the
  loop itself, not by a node) get an offset in one block, first the
  largest, each at the lowest 64-byte aligned offset where no store whose
  lifetime overlaps its own lies (`place`);
- the block is allocated once in the prologue and each of them is a
  `memref.view` of it.

Sizes that depend on launch symbols keep their own allocations: their
offsets would be known only at run time."""

from __future__ import annotations

from dataclasses import dataclass, field

from pdg.analysis.graph import ELEMENT_BYTES

from .buffers import Buffer
from .text import DYNAMIC, MemRef

ALIGN = 64  # bytes: the alignment of every buffer (runtime/lib/alloc.c)


@dataclass(eq=False)
class NestSpan:
    """The ticks of one emitted loop nest over `dim`: [start, end]."""

    dim: str
    start: int
    end: int = -1


@dataclass
class Lifetimes:
    """When each node ran during the emission: its tick and the nests
    around it, outermost first."""

    clock: int = 0
    ticks: dict[int, tuple[int, tuple[NestSpan, ...]]] = field(default_factory=dict)
    open_nests: list[NestSpan] = field(default_factory=list)

    def mark(self, values) -> None:
        """The values of one emission unit (a node, or nodes sharing a
        parallel loop): one tick for them all."""
        self.clock += 1
        for v in values:
            self.ticks[id(v)] = (self.clock, tuple(self.open_nests))

    def enter(self, dim: str) -> NestSpan:
        self.clock += 1
        nest = NestSpan(dim, self.clock)
        self.open_nests.append(nest)
        return nest

    def leave(self, nest: NestSpan) -> None:
        self.clock += 1
        nest.end = self.clock
        self.open_nests.remove(nest)

    def interval(self, buf: Buffer, readers: list) -> tuple[int, int] | None:
        """[first, last] tick the store of `buf` is live; None when a node
        involved was never emitted (then it keeps its own allocation).
        `readers`: (value of the consumer, Read) pairs."""
        v = buf.value
        events = [self.ticks.get(id(v))] + [self.ticks.get(id(c)) for c, _ in readers]
        if any(e is None for e in events):
            return None
        common = _common_prefix([nests for _, nests in events])
        first, last = None, None
        for tick, nests in events:
            if len(nests) > len(common):  # a nest the other side is not in
                span = (nests[len(common)].start, nests[len(common)].end)
            else:
                span = (tick, tick)
            first = span[0] if first is None else min(first, span[0])
            last = span[1] if last is None else max(last, span[1])
        for nest in common:  # outermost first: its span covers the inner ones
            if _crosses_steps(buf, nest.dim, readers):
                first, last = min(first, nest.start), max(last, nest.end)
                break
        return first, last


def _common_prefix(chains: list[tuple[NestSpan, ...]]) -> tuple[NestSpan, ...]:
    shortest = min(chains, key=len)
    k = 0
    while k < len(shortest) and all(c[k] is shortest[k] for c in chains):
        k += 1
    return shortest[:k]


def _crosses_steps(buf: Buffer, dim: str, readers: list) -> bool:
    """Whether the store holds `dim` steps other than the current one: it
    keeps more than one along it, or a reader looks at another step."""
    v = buf.value
    if dim not in v.domain:
        return True  # not expected inside a nest over dim: keep it whole
    j = v.domain.index(dim)
    if buf.modes[j][0] != "zero":
        return True
    return any(read.entries[j] != ("point", dim) for _, read in readers)


def shareable(buf: Buffer) -> bool:
    """A store the block may hold: a node's, of fixed size and byte-sized
    elements, that never grows."""
    return (
        buf.kind not in ("input", "partial")
        and buf.grow_dim is None
        and not buf.dynamic_point_dims
        and all(d is not DYNAMIC for d in buf.type.shape)
        and buf.type.element in ELEMENT_BYTES
        and buf.type.element != "i1"  # bits in registers, bytes in memory: left alone
    )


def byte_size(t: MemRef) -> int:
    n = ELEMENT_BYTES[t.element]
    for d in t.shape:
        n *= d
    return n


def place(items: list[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Offsets for (bytes, first tick, last tick) items such that two whose
    tick intervals overlap never overlap in bytes, and the block's size.
    Largest first, each at the lowest aligned offset that fits (the greedy
    order keeps big stores from being split around small ones)."""
    order = sorted(range(len(items)), key=lambda k: (-items[k][0], items[k][1], k))
    offsets = [0] * len(items)
    placed: list[int] = []
    total = 0
    for k in order:
        size, first, last = items[k]
        busy = sorted(
            (offsets[p], offsets[p] + items[p][0])
            for p in placed
            if items[p][1] <= last and first <= items[p][2]
        )
        at = 0
        for lo, hi in busy:
            if at + size <= lo:
                break
            at = max(at, _aligned(hi))
        offsets[k] = at
        placed.append(k)
        total = max(total, at + size)
    return offsets, _aligned(total)


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN
