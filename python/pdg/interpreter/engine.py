"""Demand-driven evaluation of a program, point by point.

A value at a point is computed when something needs it -- an output being
collected, a consumer's access, the discovery of a dynamic bound -- and is
then memoized, so every (value, point) is computed once.

There is no recursion: computing a point either finishes or raises `_Need`
with the points it is missing; those are pushed on an explicit stack and the
point is retried once they are done. Decode loops thousands of steps deep
thus never hit Python's recursion limit. A point that is requested while it
waits for its own inputs is a dependence cycle, reported with its path.

A dynamic dim ends, for each assignment of its `until` value's other dims
(a "group", e.g. one sequence b), after the first step where `until` is
true. Its extent is discovered lazily: an index i is in the domain once
`until` is known false at every step before i, and the bound symbol (`T`)
is known once `until` was true somewhere or the step cap was reached.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from pdg.runtime.memref import from_npy_bf16
from pdg.runtime.udfs import UdfFailure, convert_dtype

from .body import Executor
from .errors import InterpreterError, format_point
from .program import Access, Case, DimInfo, Program, ValueInfo
from .result import Output, Result

Key = tuple[int, tuple[int, ...]]  # (value id, point)
T = TypeVar("T")


class _Need(Exception):
    """Raised by a computation that needs these points first (in this order)."""

    def __init__(self, keys: list[Key], via: dict[Key, str] | None = None):
        super().__init__()
        self.keys = keys
        # Why a key is needed when it is not a plain read: "T(b=0)", the
        # dynamic bound its `until` value decides.
        self.via = via or {}


@dataclass
class _Group:
    """What is known of a dynamic dim for one group."""

    alive: int = 0  # `until` is false at every step < alive
    length: int | None = None  # known once it ended (or hit the cap)


class _Symbols(Sequence):
    """A consumer's symbols at one point, computed only when an expression
    reads them (a dynamic bound may not be known yet)."""

    def __init__(self, engine: Engine, consumer: ValueInfo, point: tuple[int, ...]):
        self.engine, self.consumer, self.point = engine, consumer, point

    def __len__(self) -> int:
        return len(self.consumer.symbols)

    def __getitem__(self, pos):  # type: ignore[override]
        return self.engine.symbol_value(self.consumer.symbols[pos], self.consumer, self.point)


class Engine:
    def __init__(
        self,
        program: Program,
        inputs: Mapping[str, Any],
        symbols: Mapping[str, int] | None,
        udfs: Mapping[str, Callable] | None,
        max_steps: int | None,
    ):
        self.program = program
        self.dims = program.dims
        self.extent: dict[str, int] = {}  # static and launch dims
        self.cap: dict[str, int] = {}  # dynamic dims: the most steps
        self.by_symbol: dict[str, DimInfo] = {d.symbol: d for d in self.dims.values() if d.symbol}
        self.groups: dict[str, dict[tuple[int, ...], _Group]] = {}
        self.memo: list[dict[tuple[int, ...], np.ndarray]] = [{} for _ in program.values]
        self.input_arrays: dict[int, np.ndarray] = {}
        self.udfs: Mapping[str, Callable] = udfs or {}
        self.stats: Counter[str] = Counter()
        self._bind_symbols(dict(symbols or {}), max_steps)
        self._bind_inputs(inputs)
        self._bind_udfs()

    # --- arguments -----------------------------------------------------------

    def _bind_symbols(self, symbols: dict[str, int], max_steps: int | None) -> None:
        launch = {d.symbol: d for d in self.dims.values() if d.kind == "launch"}
        for name in symbols:
            if name in launch:
                continue
            dim = self.by_symbol.get(name)
            if dim is not None and dim.kind == "dynamic":
                raise InterpreterError(
                    f"symbol {name} is the bound of dynamic dim '{dim.name}', found while running",
                    hint="give a step limit with max_steps (--max-steps) instead",
                )
            raise InterpreterError(
                f"unknown symbol {name}",
                hint=f"the program's launch symbols are: {', '.join(launch) or 'none'}",
            )
        for d in self.dims.values():
            if d.kind == "static":
                self.extent[d.name] = int(d.size or 0)
            elif d.kind == "launch":
                if d.symbol not in symbols:
                    raise InterpreterError(
                        f"missing a value for launch symbol {d.symbol} (the bound of dim "
                        f"'{d.name}')",
                        hint=f"pass symbols={{'{d.symbol}': ...}} (--symbols {d.symbol}=...)",
                    )
                value = symbols[d.symbol]
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                    raise InterpreterError(
                        f"launch symbol {d.symbol} must be an integer, got {value!r}"
                    )
                value = int(value)
                top = d.size
                if value < 1 or (top is not None and value > top):
                    allowed = f"1 <= {d.symbol} <= {top}" if top is not None else f"{d.symbol} >= 1"
                    raise InterpreterError(
                        f"launch symbol {d.symbol} = {value} is out of range: {allowed}",
                        where=f"dim '{d.name}' at {d.loc}",
                    )
                self.extent[d.name] = value
            else:
                if max_steps is not None and (isinstance(max_steps, bool) or int(max_steps) < 1):
                    raise InterpreterError(f"max_steps must be at least 1, got {max_steps}")
                caps = [c for c in (d.size, max_steps) if c is not None]
                if not caps:
                    raise InterpreterError(
                        f"dynamic dim '{d.name}' has no max: the run needs a step limit",
                        where=f"dim '{d.name}' at {d.loc}",
                        hint="pass max_steps (--max-steps) or declare `max N` on the dim",
                    )
                self.cap[d.name] = int(min(caps))
                self.groups[d.name] = {}

    def _bind_inputs(self, inputs: Mapping[str, Any]) -> None:
        declared = self.program.inputs
        missing = [n for n in declared if n not in inputs]
        if missing:
            expected = "; ".join(f"'{n}': {self._expected_input(declared[n])}" for n in missing)
            raise InterpreterError(
                f"missing input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}",
                hint=f"expected {expected}",
            )
        unknown = [n for n in inputs if n not in declared]
        if unknown:
            raise InterpreterError(
                f"unknown input{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}",
                hint=f"the program's inputs are: {', '.join(declared) or 'none'}",
            )
        for name, v in declared.items():
            for d in v.domain:
                if self.dims[d].kind == "dynamic":
                    raise InterpreterError(
                        f"input '{name}' is defined over dynamic dim '{d}', whose length is "
                        "only known while running; the interpreter cannot take such inputs",
                        where=v.loc,
                        hint="define the input over a static or launch dim, or compute it "
                        "in a node",
                    )
            arr = from_npy_bf16(np.asarray(inputs[name]), v.point.elem.dtype)
            shape = tuple(self.extent[d] for d in v.domain)
            ok_shape = arr.shape[: len(shape)] == shape and v.point.matches(arr.shape[len(shape) :])
            if not ok_shape or arr.dtype != v.point.elem.dtype:
                raise InterpreterError(
                    f"input '{name}' has shape {arr.shape} and dtype {arr.dtype}, but the "
                    f"program expects {self._expected_input(v)}",
                    where=v.loc,
                )
            view = arr.view()
            view.setflags(write=False)
            self.input_arrays[v.id] = view

    def _expected_input(self, v: ValueInfo) -> str:
        shape = [str(self.extent.get(d, d)) for d in v.domain]
        shape += ["?" if s is None else str(s) for s in v.point.shape]
        dims = f"[{', '.join(v.domain)}]"
        dtype = v.point.elem.dtype
        return f"shape ({', '.join(shape)}) and dtype {dtype} (over {dims}, {v.point} per point)"

    def _bind_udfs(self) -> None:
        missing = [c for c in self.program.callees if c not in self.udfs]
        if missing:
            raise InterpreterError(
                f"missing udf{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}",
                hint=f"the program calls: {', '.join(self.program.callees)}; pass "
                "udfs={name: callable}",
            )

    # --- the run -------------------------------------------------------------

    def run(self) -> Result:
        with np.errstate(all="ignore"):
            bounds = self._discover_bounds()
            outputs = {name: self._collect(v) for name, v in self.program.outputs.items()}
        names = Counter(v.name for v in self.program.values)
        stats = {}
        for v in self.program.values:
            if v.kind != "input":
                key = v.name if names[v.name] == 1 else f"{v.name}#{v.id}"
                stats[key] = len(self.memo[v.id])
        return Result(outputs, bounds, stats)

    def _drive(self, goal: Callable[[], T]) -> T:
        """Runs `goal`, first computing whatever points it turns out to need."""
        while True:
            try:
                return goal()
            except _Need as need:
                self._settle(need.keys)

    def _settle(self, keys: list[Key]) -> None:
        stack: list[Key] = list(reversed(keys))
        waiting: dict[Key, int] = {}  # started and waiting for inputs -> stack index
        via: dict[Key, str] = {}  # keys needed to learn a dynamic bound
        while stack:
            key = stack[-1]
            if key[1] in self.memo[key[0]]:
                stack.pop()
                waiting.pop(key, None)
                continue
            try:
                self._compute(key)
            except _Need as need:
                waiting[key] = len(stack) - 1
                via.update(need.via)
                for k in reversed(need.keys):
                    if k in waiting:
                        raise self._cycle(k, stack, waiting, via) from None
                    stack.append(k)
                continue
            stack.pop()
            waiting.pop(key, None)

    def _cycle(
        self, key: Key, stack: list[Key], waiting: dict[Key, int], via: dict[Key, str]
    ) -> InterpreterError:
        start = waiting[key]
        path = [k for i, k in enumerate(stack[start:], start) if waiting.get(k) == i] + [key]
        steps = [self._describe_key(path[0])]
        for k in path[1:]:
            reason = f"(to learn {via[k]}) " if k in via else ""
            steps.append(f"{reason}{self._describe_key(k)}")
        text = " -> ".join(steps)
        return InterpreterError(
            f"dependence cycle at run time: {text}",
            where=self._describe_key(key),
            hint="a point needs itself through these reads (possibly through a dynamic "
            "bound's `until` value); check the accesses' offsets and the cases' conditions",
        )

    def _describe_key(self, key: Key) -> str:
        v = self.program.values[key[0]]
        return f"{v.describe()} at {format_point(v.domain, key[1])}"

    # --- computing one point -------------------------------------------------

    def _compute(self, key: Key) -> None:
        v = self.program.values[key[0]]
        point = key[1]
        try:
            syms = _Symbols(self, v, point)
            if v.kind == "node":
                case = self._select_case(v, point, syms)
                args = self._read_all(v, point, case.inputs, syms)
                value = self._run_case(v, case, point, args)
            elif v.kind == "collective":
                (ranks,) = self._read_all(v, point, v.accesses, syms)
                value = self._communicate(v, ranks, point)
            else:
                args = self._read_all(v, point, v.accesses, syms)
                value = self._call_udf(v, args)
            value = self._check_point_value(v, value)
        except InterpreterError as e:
            e.add_where(f"{self._describe_key(key)} ({v.loc})")
            raise
        value.setflags(write=False)  # shared with every reader
        self.memo[v.id][point] = value

    def _select_case(self, v: ValueInfo, point: tuple[int, ...], syms: _Symbols) -> Case:
        for case in v.cases:
            if case.condition.holds(point, syms):
                return case
        conditions = ", ".join(
            f"#{c.index} {c.condition.render(v.domain, v.symbols)}" for c in v.cases
        )
        raise InterpreterError(
            "no case's condition holds",
            hint=f"the conditions are {conditions}; add a `default` case or widen one",
        )

    def _run_case(
        self, v: ValueInfo, case: Case, point: tuple[int, ...], args: list[np.ndarray]
    ) -> np.ndarray:
        ex = Executor(case.num_slots, dict(zip(v.domain, point, strict=True)))
        (value,) = ex.run(case.body, args)
        return value

    def _communicate(self, v: ValueInfo, ranks: np.ndarray, point: tuple[int, ...]) -> np.ndarray:
        """A collective over the simulated ranks: `ranks` holds every rank's
        point, stacked along the worker dim; `point` is the result's point
        (its rank along the worker dim, for a result over it)."""
        c = v.collective
        assert c is not None
        if c.op == "all_gather":
            return ranks
        if c.op == "shift":
            rank = point[v.domain.index(c.over)]
            return ranks[(rank - (c.by or 0)) % len(ranks)]
        if c.op == "reduce_scatter":
            if ranks.shape[1] != len(ranks):
                raise InterpreterError(
                    f"reduce_scatter takes a leading dim of one block per rank, but the "
                    f"points have {ranks.shape[1]} blocks and dim '{c.over}' {len(ranks)} ranks",
                    hint=f"give the input a leading dim of size {self.dims[c.over].symbol}",
                )
            rank = point[v.domain.index(c.over)]
            if c.reduction == "max":
                return ranks[:, rank].max(axis=0)
            return ranks[:, rank].sum(axis=0, dtype=ranks.dtype)
        if c.op == "broadcast":
            if c.root >= len(ranks):
                raise InterpreterError(
                    f"broadcasts from rank {c.root}, but dim '{c.over}' has {len(ranks)} ranks",
                    hint=f"give {self.dims[c.over].symbol} > {c.root}, or broadcast from a "
                    "lower rank",
                )
            return ranks[c.root]
        if c.reduction == "max":
            return ranks.max(axis=0)
        return ranks.sum(axis=0, dtype=ranks.dtype)

    def _call_udf(self, v: ValueInfo, args: list[np.ndarray]) -> np.ndarray:
        fn = self.udfs[v.callee or ""]
        try:
            result = fn(*args)
        except Exception as e:
            raise InterpreterError(
                f"udf '{v.callee}' raised {type(e).__name__}: {e}",
                hint="the UDF's exception is chained as this error's __cause__",
            ) from e
        try:
            return convert_dtype(v.callee or "", result, np.dtype(v.point.elem.dtype))
        except UdfFailure as e:
            raise InterpreterError(str(e)) from None

    def _check_point_value(self, v: ValueInfo, value) -> np.ndarray:
        arr = np.asarray(value)
        if arr.dtype != v.point.elem.dtype or not v.point.matches(arr.shape):
            raise InterpreterError(
                f"produced an array of shape {arr.shape} and dtype {arr.dtype}, but the "
                f"point type is {v.point}"
            )
        return arr

    # --- symbols and dynamic bounds ------------------------------------------

    def symbol_value(self, name: str, consumer: ValueInfo, point: tuple[int, ...]) -> int:
        dim = self.by_symbol[name]
        if dim.kind == "launch":
            return self.extent[dim.name]
        group = []
        for g in dim.group_dims:
            if g not in consumer.domain:
                raise InterpreterError(
                    f"uses {name}, the length of dynamic dim '{dim.name}', which differs per "
                    f"'{g}', but {consumer.describe()} is not defined over '{g}'",
                    hint=f"add '{g}' to the domain of {consumer.describe()}",
                )
            group.append(point[consumer.domain.index(g)])
        return self._length(dim, tuple(group))

    def _group(self, dim: DimInfo, group: tuple[int, ...]) -> _Group:
        return self.groups[dim.name].setdefault(group, _Group())

    def _advance(self, dim: DimInfo, group: tuple[int, ...], st: _Group) -> None:
        """Learns one more step of `dim` for `group` (needs `until` there)."""
        assert dim.until is not None
        point = tuple(
            st.alive if d == dim.name else group[dim.group_dims.index(d)] for d in dim.until.domain
        )
        memo = self.memo[dim.until.id]
        if point not in memo:
            where = format_point(dim.group_dims, group) if dim.group_dims else ""
            key = (dim.until.id, point)
            raise _Need([key], via={key: f"{dim.symbol}{where}"})
        # The last allowed step ends the dim whatever `until` says there.
        if bool(memo[point]) or st.alive + 1 >= self.cap[dim.name]:
            st.length = st.alive + 1
        else:
            st.alive += 1

    def _length(self, dim: DimInfo, group: tuple[int, ...]) -> int:
        st = self._group(dim, group)
        while st.length is None:
            self._advance(dim, group, st)
        return st.length

    def _in_dynamic_domain(self, dim: DimInfo, group: tuple[int, ...], i: int) -> bool:
        if i < 0 or i >= self.cap[dim.name]:
            return False
        st = self._group(dim, group)
        while True:
            if st.length is not None:
                return i < st.length
            if i <= st.alive:
                return True
            self._advance(dim, group, st)

    def _all_groups(self, dim: DimInfo) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(self.extent[g]) for g in dim.group_dims)))

    def _discover_bounds(self) -> dict[str, int | np.ndarray]:
        bounds: dict[str, int | np.ndarray] = {}
        for dim in self.dims.values():
            if dim.kind != "dynamic":
                continue
            lengths = [
                self._drive(lambda d=dim, g=g: self._length(d, g)) for g in self._all_groups(dim)
            ]
            if not dim.group_dims:
                bounds[dim.symbol or dim.name] = lengths[0]
            else:
                shape = tuple(self.extent[g] for g in dim.group_dims)
                bounds[dim.symbol or dim.name] = np.array(lengths, dtype=np.int64).reshape(shape)
        return bounds

    # --- reading through accesses --------------------------------------------

    def _read_all(
        self, consumer: ValueInfo, point: tuple[int, ...], accesses: Sequence[Access], syms
    ) -> list[np.ndarray]:
        """Every access's array; the points missing from all of them at once."""
        arrays, needs, via = [], [], {}
        for acc in accesses:
            try:
                arrays.append(self._read(consumer, point, acc, syms))
            except _Need as need:
                needs += need.keys
                via.update(need.via)
        if needs:
            raise _Need(needs, via)
        return arrays

    def _out_of_domain(
        self, consumer: ValueInfo, point, acc: Access, j: int, index: int, extent: str
    ) -> InterpreterError:
        d = acc.producer.domain[j]
        return InterpreterError(
            f"reads {acc.text}, index {index} along dim '{d}', outside the domain of "
            f"{acc.producer.describe()} ({extent})",
            hint="guard the case with a condition or clamp the access, e.g. max(0, t - 3) : t + 1",
        )

    def _read(self, consumer: ValueInfo, point: tuple[int, ...], acc: Access, syms) -> np.ndarray:
        producer = acc.producer
        selection: list[int | range] = []
        for e in acc.entries:
            if e.ubs is None:
                selection.append(int(e.lbs[0].eval(point, syms)))
            else:
                lo = max(int(x.eval(point, syms)) for x in e.lbs)
                hi = min(int(x.eval(point, syms)) for x in e.ubs)
                selection.append(range(lo, max(lo, hi)))
        # Static and launch dims, and the step cap of dynamic ones, per entry.
        for j, s in enumerate(selection):
            dim = self.dims[producer.domain[j]]
            n = self.extent[dim.name] if dim.kind != "dynamic" else self.cap[dim.name]
            if isinstance(s, range):  # an empty slice reads nothing, wherever it is
                bad = None
                if len(s) and s.start < 0:
                    bad = s.start
                elif len(s) and s.stop > n:
                    bad = s.stop - 1
            else:
                bad = s if not 0 <= s < n else None
            if bad is not None:
                extent = f"0 <= {dim.name} < {n}" + (
                    f", at most {n} steps" if dim.kind == "dynamic" else ""
                )
                raise self._out_of_domain(consumer, point, acc, j, bad, extent)
        if producer.kind == "input":
            arr = self.input_arrays[producer.id]
            idx = tuple(slice(s.start, s.stop) if isinstance(s, range) else s for s in selection)
            return arr[idx]
        self._check_dynamic(consumer, point, acc, selection)
        memo = self.memo[producer.id]
        points = list(itertools.product(*(s if isinstance(s, range) else (s,) for s in selection)))
        missing = [(producer.id, p) for p in points if p not in memo]
        if missing:
            raise _Need(missing)
        slice_shape = tuple(len(s) for s in selection if isinstance(s, range))
        if len(slice_shape) == 0:
            return memo[points[0]]
        if not points:
            inner = tuple(s or 0 for s in producer.point.shape)
            return np.empty(slice_shape + inner, producer.point.elem.dtype)
        values = [memo[p] for p in points]
        if len({v.shape for v in values}) > 1:
            raise InterpreterError(
                f"reads {acc.text}, whose points have different shapes; a slice needs one shape"
            )
        arr = np.stack(values).reshape(slice_shape + values[0].shape)
        arr.setflags(write=False)
        return arr

    def _check_dynamic(
        self, consumer: ValueInfo, point, acc: Access, selection: list[int | range]
    ) -> None:
        """Dynamic dims: the largest index read in each group must not be past
        the step where the dim ended (the domain is a prefix 0..T-1)."""
        producer = acc.producer
        for j, s in enumerate(selection):
            dim = self.dims[producer.domain[j]]
            if dim.kind != "dynamic" or (isinstance(s, range) and not len(s)):
                continue
            top = s[-1] if isinstance(s, range) else s
            if not all(g in producer.domain for g in dim.group_dims):
                continue  # not per group: only the step cap applies (checked)
            group_sel = [selection[producer.domain.index(g)] for g in dim.group_dims]
            if any(isinstance(g, range) and not len(g) for g in group_sel):
                continue
            for group in itertools.product(
                *(g if isinstance(g, range) else (g,) for g in group_sel)
            ):
                if not self._in_dynamic_domain(dim, group, top):
                    length = self._group(dim, group).length
                    where = format_point(dim.group_dims, group)
                    raise self._out_of_domain(
                        consumer,
                        point,
                        acc,
                        j,
                        top,
                        f"dim '{dim.name}' ended after {length} steps for {where}",
                    )

    # --- outputs -------------------------------------------------------------

    def _value_at(self, v: ValueInfo, point: tuple[int, ...]) -> np.ndarray:
        if v.kind == "input":
            return self.input_arrays[v.id][point]
        memo = self.memo[v.id]
        if point not in memo:
            raise _Need([(v.id, point)])
        return memo[point]

    def _dim_lengths(self, v: ValueInfo, d: str) -> tuple[bool, Callable[[dict], int]]:
        """Whether dim `d` of `v` is ragged, and its length given the group dims."""
        dim = self.dims[d]
        if dim.kind != "dynamic":
            return False, lambda _: self.extent[d]
        groups = self._all_groups(dim)
        lengths = {g: self._length(dim, g) for g in groups}  # discovered already
        if not all(g in v.domain for g in dim.group_dims):
            top = max(lengths.values())
            return False, lambda _: top
        if len(set(lengths.values())) <= 1:
            only = next(iter(lengths.values()))
            return False, lambda _: only
        return True, lambda at: lengths[tuple(at[g] for g in dim.group_dims)]

    def _collect(self, v: ValueInfo) -> Output:
        info = {d: self._dim_lengths(v, d) for d in v.domain}
        ragged_groups: set[str] = set()
        for d, (ragged, _) in info.items():
            if ragged:
                ragged_groups.update(self.dims[d].group_dims)
        outer = [d for d in v.domain if d in ragged_groups]
        inner = [d for d in v.domain if d not in ragged_groups]
        parts = []
        for gvals in itertools.product(*(range(self.extent[d]) for d in outer)):
            at = dict(zip(outer, gvals, strict=True))
            extents = [info[d][1](at) for d in inner]
            parts.append(self._gather(v, at, inner, extents))
        if not outer:
            return parts[0]
        return parts

    def _gather(
        self, v: ValueInfo, at: dict[str, int], inner: list[str], extents: list[int]
    ) -> np.ndarray | list:
        values = []
        for ivals in itertools.product(*(range(e) for e in extents)):
            full = {**at, **dict(zip(inner, ivals, strict=True))}
            point = tuple(full[d] for d in v.domain)
            values.append(self._drive(lambda p=point: self._value_at(v, p)))
        if not values:
            inner_shape = tuple(s or 0 for s in v.point.shape)
            return np.empty(tuple(extents) + inner_shape, v.point.elem.dtype)
        if len({x.shape for x in values}) > 1:
            # Points of symbolic size (e.g. a softmax over a growing window)
            # cannot stack: nested lists over the domain, never padded.
            return _nest(values, extents)
        return np.stack(values).reshape(tuple(extents) + values[0].shape)


def _nest(values: list, extents: list[int]) -> list:
    """Row-major `values` as nested lists with the given extents."""
    if len(extents) <= 1:
        return list(values)
    step = len(values) // extents[0]
    return [_nest(values[i * step : (i + 1) * step], extents[1:]) for i in range(extents[0])]


def interpret_program(
    program: Program,
    inputs: Mapping[str, Any],
    symbols: Mapping[str, int] | None = None,
    udfs: Mapping[str, Callable] | None = None,
    max_steps: int | None = None,
) -> Result:
    return Engine(program, inputs, symbols, udfs, max_steps).run()
