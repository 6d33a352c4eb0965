"""Reusing a window's oldest slot in the step that overwrites it.

Along a sequential dim d, storage.py keeps a value in a circular buffer of
`back + 1` steps when a read looks `back` steps back. Once the schedule is
known, `back` slots are enough when every read at exactly that distance
runs in the step before the value's producer: at step t the slot
t mod back still holds step t - back when those reads take it, and the
producer overwrites it after them. The new Adam moment of iteration i - 1
is read at the start of iteration i and written at its end: one slot, not
two.

The conditions, each refusing the reuse when it cannot be shown:
- the producer's innermost loop is d, and the nest steps one way: every
  read in it looks at the current step or earlier ones in that direction;
- no read at the oldest distance is the value's own (a recurrence reads
  and writes the one slot in one body);
- each read at the oldest distance is made in the producer's nest over d,
  earlier in the step (schedule order, consistent with execution: a
  consumer's own inner nests then lie wholly before the producer), and, in
  the producer's own group, at an earlier stage (nodes of one stage may
  overlap);
- a read after the nest (acc[I - 1], forward nests only) still finds its
  last steps, which the smaller window keeps as long as it is no shorter
  than them."""

from __future__ import annotations

from .graph import Value
from .groups import Grouping
from .polyhedral import Polyhedral
from .schedule import Slot


def reused_window(
    poly: Polyhedral, groups: Grouping, v: Value, dim: str, reads, slots: dict[int, Slot]
) -> int | None:
    """The steps of `v` to keep along `dim` when the oldest slot is reused
    (at least 1), or None when the reuse does not apply. `reads` are all
    of v's reads; along `dim` they run in v's nest or after it."""
    producer = slots.get(id(v))
    if producer is None or producer.phase != "loop" or not producer.loops:
        return None
    if producer.loops[-1] != dim or producer.loops != groups.loops(v):
        return None  # not the innermost loop, or a schedule of another graph
    reverse = dim in producer.reverse
    after, inside = 1, []  # steps reads after the nest need; (read, distance back)
    for read in reads:
        if dim not in read.consumer.domain:
            if reverse or groups.runs_inside(read.consumer, v, dim):
                return None  # from_end counts from the forward end only
            last = poly.upper_bound(poly.from_end(read, dim))
            if last is None:
                return None
            after = max(after, last)
            continue
        deltas = poly.distances(read, dim)
        low, high = poly.lower_bound(deltas), poly.upper_bound(deltas)
        if low is None or high is None:
            return None
        nearest, farthest = (-high, -low) if reverse else (low, high)
        if nearest < 0:
            return None  # a read ahead of the step
        inside.append((read, farthest))
    back = max((far for _, far in inside), default=0)
    if back < 1:
        return None
    for read, far in inside:
        if far == back and not _read_before(read, producer, slots):
            return None
    return max(back, after)


def _read_before(read, producer: Slot, slots: dict[int, Slot]) -> bool:
    """Whether `read` is made in the producer's innermost nest, before the
    producer in each step (and not by the producer itself)."""
    if read.consumer is read.producer:
        return False
    consumer = slots.get(id(read.consumer))
    if consumer is None or consumer.phase != "loop":
        return False
    depth = len(producer.loops)
    if consumer.loops[:depth] != producer.loops or consumer.path[:depth] != producer.path[:depth]:
        return False
    if consumer.order >= producer.order:
        return False
    return consumer.path != producer.path or consumer.stage < producer.stage
