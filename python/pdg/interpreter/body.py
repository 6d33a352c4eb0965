"""Node bodies compiled once into flat op lists, then run per point.

A body is upstream MLIR (arith, math, tensor, linalg, ...) computing the
value at ONE point. Walking MLIR objects through the Python bindings at every
point would be slow, so each case body is compiled once: every SSA value gets
a slot in one list (nested regions share it, as they may use values from
above), every op becomes a `BodyOp` with its handler looked up in the table
of `ops/`. Running a body is then a loop over handlers reading and writing
slots.

Inside linalg.generic and friends a region is run once on whole arrays (the
"lanes" of its iteration space): a scalar-typed value is then an array; only
its dtype is checked, not its shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from pdg.ir.source import format_location

from .errors import InterpreterError
from .types import Type, coerce, convert_type

Handler = Callable[["Executor", "BodyOp", list], Any]


@dataclass(eq=False)
class Region:
    """A single-block region: argument slots, ops, and what its terminator yields."""

    args: tuple[int, ...]
    arg_types: tuple[Type, ...]
    ops: tuple[BodyOp, ...]
    yields: tuple[int, ...]
    terminator: str
    # For each slot defined in the region (transitively), the region
    # arguments it depends on: linalg.generic asks whether a value depends
    # on an output's block argument.
    arg_deps: dict[int, frozenset[int]] = field(default_factory=dict)
    defining_op: dict[int, BodyOp] = field(default_factory=dict)


@dataclass(eq=False)
class BodyOp:
    name: str
    op: ir.Operation
    operands: tuple[int, ...]
    operand_types: tuple[Type, ...]
    results: tuple[int, ...]
    result_types: tuple[Type, ...]
    regions: tuple[Region, ...]
    loc: str
    handler: Handler
    # Per-op memo for handlers (decoded attributes, constant arrays).
    cache: dict[str, Any] = field(default_factory=dict)

    def attr(self, name: str) -> ir.Attribute | None:
        attrs = self.op.attributes
        return attrs[name] if name in attrs else None

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def where(self) -> str:
        return f"{self.name} at {self.loc}"


class Compiler:
    """Assigns slots and compiles regions; one per node case body."""

    def __init__(self, handlers: Mapping[str, Handler]):
        self.handlers = handlers
        self.slots: dict[ir.Value, int] = {}
        self.types: dict[int, Type] = {}

    def slot(self, v: ir.Value) -> int:
        if v not in self.slots:
            self.slots[v] = len(self.slots)
        return self.slots[v]

    def _typed_slot(self, v: ir.Value, where: str) -> tuple[int, Type]:
        s = self.slot(v)
        if s not in self.types:
            try:
                self.types[s] = convert_type(v.type)
            except InterpreterError as e:
                raise e.add_where(where) from None
        return s, self.types[s]

    def region(self, region: ir.Region) -> Region:
        blocks = list(region.blocks)
        if not blocks:  # e.g. an scf.if without else
            return Region(args=(), arg_types=(), ops=(), yields=(), terminator="")
        if len(blocks) != 1:
            loc = format_location(region.owner.location)
            raise InterpreterError(
                f"a region with {len(blocks)} blocks is not supported",
                where=f"{region.owner.name} at {loc}",
            )
        block = blocks[0]
        owner = region.owner
        arg_slots, arg_types = [], []
        for a in block.arguments:
            s, t = self._typed_slot(a, f"{owner.name} at {format_location(owner.location)}")
            arg_slots.append(s)
            arg_types.append(t)
        ops: list[BodyOp] = []
        terminator = None
        operations = list(block.operations)
        for i, o in enumerate(operations):
            o = o.operation
            if i == len(operations) - 1 and o.name.endswith("yield"):
                terminator = o
                break
            ops.append(self.op(o))
        if terminator is None:
            raise InterpreterError(
                "a region must end with a yield",
                where=f"{owner.name} at {format_location(owner.location)}",
            )
        result = Region(
            args=tuple(arg_slots),
            arg_types=tuple(arg_types),
            ops=tuple(ops),
            yields=tuple(self.slot(v) for v in terminator.operands),
            terminator=terminator.name,
        )
        _analyse_dependences(result)
        return result

    def op(self, o: ir.Operation) -> BodyOp:
        loc = format_location(o.location)
        where = f"{o.name} at {loc}"
        handler = self.handlers.get(o.name)
        if handler is None:
            raise InterpreterError(
                f"unsupported op '{o.name}'",
                where=where,
                hint="the reference interpreter handles arith, math, tensor, linalg, scf and "
                "affine.apply/min/max ops; rewrite the body with those or add a handler in "
                "python/pdg/interpreter/ops/",
            )
        operand_slots, operand_types = [], []
        for v in o.operands:
            s, t = self._typed_slot(v, where)
            operand_slots.append(s)
            operand_types.append(t)
        results, result_types = [], []
        for r in o.results:
            s, t = self._typed_slot(r, where)
            results.append(s)
            result_types.append(t)
        regions = tuple(self.region(r) for r in o.regions)
        return BodyOp(
            name=o.name,
            op=o,
            operands=tuple(operand_slots),
            operand_types=tuple(operand_types),
            results=tuple(results),
            result_types=tuple(result_types),
            regions=regions,
            loc=loc,
            handler=handler,
        )


def _analyse_dependences(region: Region) -> None:
    """Which region arguments each value transitively depends on."""
    deps: dict[int, frozenset[int]] = {a: frozenset([a]) for a in region.args}

    def visit(ops: Sequence[BodyOp]) -> None:
        for op in ops:
            # A nested region's values flow into the op's results: count the
            # arguments used anywhere inside it as inputs too.
            used = set()
            for s in op.operands:
                used |= deps.get(s, frozenset())
            for r in op.regions:
                visit(r.ops)
                for s in r.yields:
                    used |= deps.get(s, frozenset())
                for inner in r.ops:
                    for s in inner.operands:
                        used |= deps.get(s, frozenset())
            for s in op.results:
                deps[s] = frozenset(used)
                region.defining_op[s] = op

    visit(region.ops)
    region.arg_deps = deps


@dataclass
class Lanes:
    """The iteration space a region is being run over, for `linalg.index`."""

    indices: list[Any]  # per loop dim: an int or an array broadcastable to the space


class Executor:
    """Runs compiled regions for one point of one node."""

    def __init__(self, num_slots: int, point: Mapping[str, int]):
        self.env: list[Any] = [None] * num_slots
        self.point = point
        self.lanes: list[Lanes] = []

    def run(self, region: Region, args: Sequence[Any]) -> list[Any]:
        env = self.env
        for s, a in zip(region.args, args, strict=True):
            env[s] = a
        for op in region.ops:
            self.run_op(op)
        return [env[s] for s in region.yields]

    def run_in_lanes(self, region: Region, args: Sequence[Any], indices: list[Any]) -> list[Any]:
        """Runs `region` with array arguments over an iteration space."""
        self.lanes.append(Lanes(indices))
        try:
            return self.run(region, args)
        finally:
            self.lanes.pop()

    def run_op(self, op: BodyOp) -> None:
        env = self.env
        args = [env[s] for s in op.operands]
        try:
            out = op.handler(self, op, args)
            if len(op.results) == 1:
                out = (out,)
            elif out is None:
                out = ()
            if len(out) != len(op.results):
                raise InterpreterError(f"handler returned {len(out)} results for {len(op.results)}")
            for s, t, v in zip(op.results, op.result_types, out, strict=True):
                # Tensors are real tensors even inside lanes; scalars there
                # are arrays over the iteration space, of any shape.
                env[s] = coerce(v, t, check_shape=True)
        except InterpreterError as e:
            e.add_where(op.where())
            raise
        except Exception as e:
            # NumPy's own complaints (shapes that do not fit, ...) or a bug in
            # a handler: reported with the op, never as a bare traceback.
            raise InterpreterError(
                f"failed: {type(e).__name__}: {e}",
                where=op.where(),
                hint="this op's operands or attributes are outside what the interpreter supports",
            ) from e
