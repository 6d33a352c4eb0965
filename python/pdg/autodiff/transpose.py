"""Transposing an access: from contributions at the consumer's points to a
gradient at the producer's points.

A consumer at point c reads its producer through an access (one entry per
producer dim). The gradient at producer point s is the sum of the
contributions of every c whose access covers s: the inverse of the access
relation. Per producer dim, the entry decides how:

    x[c + k]            point read: c = s - k, when 0 <= s - k < |c|
    x[k]                constant point: only s == k receives
    x[lo : hi]          slice without consumer dims: element s - lo
    x[max(..) : c + k]  slice along consumer dim c (windows, causal prefixes,
                        blocks): every c in [s - k + 1, s - k + W] may read s,
                        at row s - c - k + W of its contribution padded to
                        the slice's largest size W

and consumer dims the access does not mention are summed over (a dynamic
one first, per sequence: each ends at its own step; a worker dim is kept,
the result then being one rank's partial that reverse.py all-reduces). The result
is a node over the producer's domain: a case that holds where some consumer
reads s, and zeros elsewhere (at the sequence ends and outside slices).
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import ops
from pdg.frontend.adjoint_ops import (
    broadcast_like,
    diagonal,
    diagonal_sum,
    over_domain,
    pad_front,
    zeros,
)
from pdg.frontend.errors import ProgramError
from pdg.frontend.index import Condition, Const, IndexExpr, linear_form
from pdg.frontend.index import max as imax
from pdg.frontend.index import min as imin
from pdg.frontend.tensor import Dim, Operand, Point, RecurrentTensor, Slice, TensorLike


@dataclass
class _Entry:
    """How one producer dim is read: kind point/fixed/slice/window."""

    kind: str
    dim: Dim  # the producer dim
    consumer: Dim | None = None  # the consumer dim it follows, if any
    offset: IndexExpr | None = None  # k in c + k (point, window) or lo (slice)
    ubs: tuple = ()  # slice upper bounds
    width: int = 0  # window: the largest slice


def transpose(
    contribution: TensorLike,
    operand: Operand,
    consumer_domain: tuple,
    restriction: Condition | None,
    source_restriction: Condition | None,
    what: str,
) -> RecurrentTensor:
    """The gradient at the producer's points from `contribution` (over the
    consumer's domain, typed like the operand's read). `restriction`: where
    the consumer exists, if not everywhere (and `source_restriction` where
    the producer does). `what` names the read in errors."""
    source = operand.source
    program = source.program
    entries = [
        _classify(e, d, consumer_domain, what)
        for e, d in zip(operand.entries, source.domain, strict=True)
    ]
    followed = [e.consumer.name for e in entries if e.consumer is not None]
    if len(set(followed)) != len(followed):
        raise ProgramError(
            f"cannot differentiate {what}: two producer dims follow the same consumer dim",
            hint="read each dim along its own consumer dim",
        )
    windows = [e for e in entries if e.kind == "window"]
    if len(windows) > 1:
        raise ProgramError(f"cannot differentiate {what}: it slices along two consumer dims")

    # Slice axes of the contribution, in producer dim order, then the point.
    slice_axes = [e for e in entries if e.kind in ("slice", "window")]
    c = over_domain(contribution, consumer_domain)
    if windows:
        w = slice_axes.index(windows[0])
        if w != 0:
            perm = [w] + [a for a in range(c.ndim) if a != w]
            c = ops.permute(c, perm)
            slice_axes.insert(0, slice_axes.pop(w))
        c = pad_front(c, windows[0].width)
    if restriction is not None:
        c = _mask(c, restriction, operand, consumer_domain, source_restriction, what)
    # A dynamic consumer dim the read does not mention is summed first, per
    # sequence (each over its own T), in a node keeping the other consumer
    # dims: one sum over the sequences and their steps together would read
    # T without the sequence's coordinates.
    mentioned = {e.consumer.name for e in entries if e.consumer is not None}
    for cd in [d for d in consumer_domain if d.kind == "dynamic" and d.name not in mentioned]:
        c = ops.sum(c[tuple(slice(0, d.size) if d is cd else d for d in consumer_domain)], axis=0)
        consumer_domain = tuple(d for d in consumer_domain if d is not cd)
    # A worker dim the read does not mention (a node on every rank reading a
    # value that is the same on all of them) stays: the result is this
    # rank's partial, and reverse.py all-reduces the sum of a value's
    # partials once.
    ranks = {d.name for d in consumer_domain if d.worker and d.name not in mentioned}

    # Read the contribution from the producer's points.
    by_consumer = {e.consumer.name: e for e in entries if e.consumer is not None}
    read, free = [], []
    for cd in consumer_domain:
        e = by_consumer.get(cd.name)
        if cd.name in ranks:
            read.append(cd)
        elif e is None:
            read.append(slice(0, cd.size))
            free.append(cd)
        elif e.kind == "point":
            read.append(e.dim - e.offset)
        else:
            read.append(_window_readers(e, cd))
    r = c[tuple(read)] if read else c
    # Axes now: one per free consumer dim and one for the window's consumer
    # range (in consumer order), then the contribution's point.
    lead = [
        cd.name
        for cd in consumer_domain
        if cd.name not in ranks
        and (cd.name not in by_consumer or by_consumer[cd.name].kind == "window")
    ]
    free_names = {cd.name for cd in free}
    free_axes = [a for a, name in enumerate(lead) if name in free_names]
    value: TensorLike = ops.sum(r, axis=tuple(free_axes)) if free_axes else r
    if windows:
        e = windows[0]
        value = diagonal_sum(value, _window_offset(program, e))
    for e in [s for s in slice_axes if s.kind == "slice"]:
        at = ops.coordinate(e.dim) - e.offset.value
        value = ops.take(value, at, axis=0)

    return _at_producer(value, entries, source, ranks)


def _window_readers(e: _Entry, cd: Dim) -> slice:
    """The consumers along `cd` whose window may hold producer point s."""
    first = e.dim - e.offset + 1  # >= 0 when the slice ends at c + 1 or earlier
    start = first if e.offset.value <= 1 else imax(0, first)
    return slice(start, imin(cd.size, first + e.width))


def _at_producer(
    value: TensorLike, entries: list[_Entry], source, ranks: set[str] = frozenset()
) -> RecurrentTensor:
    """`value` where some consumer reads the producer's point, zeros
    elsewhere; over the producer's domain and the worker dims in `ranks`."""
    program = source.program
    domain = program.ordered_dims({d.name for d in source.domain} | ranks)
    conditions = _conditions(entries)
    if not conditions:
        return over_domain(value, domain)
    out = program.recurrent(source.shape, source.dtype, domain, name=_part(source))
    out[Condition(tuple(conditions))] = value
    out[...] = zeros(program, source.shape, source.dtype)
    return out


def transpose_einsum(
    factors: list,
    keep: str,
    spec: str,
    operand: Operand,
    consumer_domain: tuple,
    restriction: Condition | None,
    what: str,
) -> RecurrentTensor | None:
    """The gradient of a window read by an einsum (attention's keys and
    values), without the per-consumer part padded to the window: when the
    window's letter is in one factor only (the scores' gradient for the
    keys, the probabilities for the values), only that factor is padded; at
    producer point s its rows for s, one per consumer reading s, are
    contracted with the other factor read at those consumers. O(W) numbers
    per consumer are stored instead of O(W * point). None when the read or
    the einsum has another form (then `transpose` does it)."""
    if restriction is not None or len(factors) != 2 or keep != spec:
        return None
    source = operand.source
    entries = [
        _classify(e, d, consumer_domain, what)
        for e, d in zip(operand.entries, source.domain, strict=True)
    ]
    windows = [e for e in entries if e.kind == "window"]
    if len(windows) != 1 or any(e.kind == "slice" for e in entries):
        return None
    by_consumer = {e.consumer.name: e for e in entries if e.consumer is not None}
    if len(by_consumer) != len(entries) or set(by_consumer) != {d.name for d in consumer_domain}:
        return None  # a fixed index or a consumer dim summed over: the general path
    letter = spec[0]  # the window is the read's only slice: its first axis
    (a_spec, a), (b_spec, b) = factors
    if letter in b_spec:
        (a_spec, a), (b_spec, b) = (b_spec, b), (a_spec, a)
    if letter not in a_spec or letter in b_spec or len(set(a_spec)) != len(a_spec):
        return None
    window = windows[0]
    a = over_domain(a, consumer_domain)
    ax = a_spec.index(letter)
    if ax:
        a = ops.permute(a, [ax] + [i for i in range(a.ndim) if i != ax])
        a_spec = letter + a_spec.replace(letter, "")
    read = []
    for cd in consumer_domain:
        e = by_consumer[cd.name]
        read.append(e.dim - e.offset if e.kind == "point" else _window_readers(e, cd))
    program = source.program
    rows = diagonal(pad_front(a, window.width)[tuple(read)], _window_offset(program, window))
    n = next(c for c in "nmkjiabcdefgopqrstuvwxyz" if c not in a_spec + b_spec + spec)
    others = over_domain(b, consumer_domain)[tuple(read)]
    value = ops.einsum(f"{n}{a_spec[1:]},{n}{b_spec}->{spec[1:]}", rows, others)
    return _at_producer(value, entries, source)


def _mask(c, restriction, operand, domain, source_restriction, what) -> RecurrentTensor:
    """The contribution where the consumer exists, zeros elsewhere: the
    contribution itself may read outside its producers there."""
    program = c.program
    masked = program.recurrent(c.shape, c.dtype, domain)
    masked[restriction] = c
    if all(d is not None for d in c.shape):
        masked[...] = zeros(program, c.shape, c.dtype)
    elif operand.is_identity() and source_restriction is None:
        # zeros sized like the producer, which exists everywhere
        masked[...] = broadcast_like(ops.constant(program, 0.0, (), c.dtype), operand.source)
    elif not (operand.is_identity() and source_restriction.key() == restriction.key()):
        # (a producer restricted alike is only differentiated where it exists)
        raise ProgramError(
            f"cannot differentiate {what}: a value of symbolic shape read under "
            f"'{restriction.render()}' from a value restricted otherwise",
        )
    return masked


def _part(source) -> str:
    """The name of one consumer's part of a gradient."""
    return f"d_{source.name}_part" if source.name else "d_part"


def _window_offset(program, e: _Entry) -> TensorLike:
    """Row of s in the padded contribution of the first consumer read,
    c0 = max(0, s - k + 1): s - c0 - k + W."""
    k = e.offset.value
    if k <= 1:
        return ops.constant(program, e.width - 1, (), "i64")
    s = ops.coordinate(e.dim)
    return ops.minimum(s + (e.width - k), e.width - 1)


def _conditions(entries: list[_Entry]) -> list:
    out = []
    for e in entries:
        s = e.dim
        if e.kind == "fixed":
            out += (s == e.offset).constraints
        elif e.kind == "point":
            k = e.offset.value if isinstance(e.offset, Const) else None
            same = e.consumer.name == s.name
            if not (same and k is not None and k <= 0):
                out += (s - e.offset >= 0).constraints
            if not (same and k is not None and k >= 0):
                out += (s - e.offset <= e.consumer.size - 1).constraints
        elif e.kind == "slice":
            out += (s >= e.offset).constraints
            for ub in e.ubs:
                if not _is_size_of(ub, s):  # s < |s| holds everywhere
                    out += (s < ub).constraints
        elif e.kind == "window":
            k = e.offset.value
            # some consumer in range: s - k + 1 <= |c| - 1 and s - k + W >= 0
            if not (e.consumer.name == s.name and k >= 1):
                out += (s - k + 1 <= e.consumer.size - 1).constraints
            if e.width - k < 0:
                out += (s + (e.width - k) >= 0).constraints
    return [c for c in out if not _trivial(c)]


def _is_size_of(e: IndexExpr, dim: Dim) -> bool:
    lin = linear_form(e)
    size = linear_form(dim.size)
    return lin is not None and lin == size


def _trivial(c) -> bool:
    """A constraint on a producer dim that holds at every point: `s + k >= 0`
    with k >= 0 (dims start at 0)."""
    lin = linear_form(c.expr)
    if lin is None or c.kind != ">=":
        return False
    return lin.get("", 0) >= 0 and all(v >= 0 for n, v in lin.items() if n)


def _classify(entry, dim: Dim, consumer_domain: tuple, what: str) -> _Entry:
    names = {d.name: d for d in consumer_domain}
    if isinstance(entry, Point):
        used = entry.expr.names() & set(names)
        if not used:
            return _Entry("fixed", dim, offset=entry.expr)
        lin = linear_form(entry.expr)
        (c,) = used if len(used) == 1 else (None,)
        if c is None or lin is None or lin.get(c) != 1:
            raise ProgramError(
                f"cannot differentiate {what}: the index '{entry.render()}' is not "
                "a consumer dim plus an offset",
                hint="gradients flow through reads like x[t], x[t - 1] or x[0]",
            )
        return _Entry("point", dim, names[c], offset=_without(lin, c))
    assert isinstance(entry, Slice)
    used = entry.names() & set(names)
    if not used:
        if len(entry.lbs) != 1 or not isinstance(entry.lbs[0], Const):
            raise ProgramError(
                f"cannot differentiate {what}: the slice start '{entry.render()}' "
                "must be a constant"
            )
        return _Entry("slice", dim, offset=entry.lbs[0], ubs=entry.ubs)
    if len(used) != 1 or len(entry.ubs) != 1:
        raise ProgramError(
            f"cannot differentiate {what}: the slice '{entry.render()}' must end at "
            "one consumer dim plus a constant",
            hint="windows like x[max(0, t - 7) : t + 1] and prefixes x[0 : t + 1] are supported",
        )
    (c,) = used
    lin = linear_form(entry.ubs[0])
    if lin is None or lin.get(c) != 1 or set(lin) - {c, ""}:
        raise ProgramError(
            f"cannot differentiate {what}: the slice end '{entry.ubs[0].render()}' must be "
            f"'{c} + constant'"
        )
    k = lin.get("", 0)
    width = _window_width(entry, c, k, names[c])
    if width is None:
        raise ProgramError(
            f"cannot differentiate {what}: the slice '{entry.render()}' has no static largest size",
            hint=f"give '{c}' a static size or a max, or bound the slice's start",
        )
    return _Entry("window", dim, names[c], offset=Const(k), width=width)


def _window_width(entry: Slice, c: str, k: int, cdim: Dim) -> int | None:
    """The largest ub - lb over the consumer's points: ub - lb = min over the
    start's terms of (c + k - term), each bounded separately."""
    from pdg.frontend.index import Div, Scaled

    best = None
    for term in entry.lbs:
        bound = None
        lin = linear_form(term)
        if lin is not None and not (set(lin) - {c, ""}):
            coef = lin.get(c, 0)
            if coef == 1:  # c - w + 1: constant width
                bound = k - lin.get("", 0)
            elif coef == 0:  # a constant start: c's largest value counts
                top = cdim.static_size or cdim.max
                if top is not None:
                    bound = top - 1 + k - lin.get("", 0)
        elif (
            isinstance(term, Scaled)
            and isinstance(term.expr, Div)
            and term.expr.op == "floordiv"
            and term.expr.divisor == term.factor
            and term.expr.expr.names() == {c}
            and linear_form(term.expr.expr) == {c: 1}
        ):  # (c // S) * S: the block start
            bound = term.factor - 1 + k
        if bound is not None:
            best = bound if best is None else min(best, bound)
    return best


def _without(lin: dict, name: str) -> IndexExpr:
    """The affine form `lin` minus its `name` term, as an index expression."""
    from pdg.frontend.index import SymRef

    out: IndexExpr = Const(lin.get("", 0))
    for n, v in lin.items():
        if n in ("", name) or v == 0:
            continue
        out = out + SymRef(n) * v
    return out
