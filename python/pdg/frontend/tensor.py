"""Recurrent tensors: values defined pointwise over a domain of dims.

A `RecurrentTensor` is one tensor per point of its domain. Indexing it
(`x[t - 1]`, `k[pdg.max(0, t - 63) : t + 1]`) gives a `View`: the same
values read through an access, usable wherever a tensor is. An unindexed dim
means "at the current point". Operators (ops.py) combine tensors into new
recurrent tensors whose domain is the union of their operands' domains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .dtypes import TensorType
from .errors import ProgramError, SourceLoc, user_location
from .index import BoundList, Condition, DimRef, IndexExpr, SymRef, as_index, linear_form

if TYPE_CHECKING:
    from .program import Program


class Dim(DimRef):
    """A dimension `0 <= d < bound`: static, launch or dynamic."""

    def __init__(
        self,
        program: Program,
        name: str,
        kind: str,
        size: int | None = None,
        symbol: str | None = None,
        max: int | None = None,  # noqa: A002
    ):
        super().__init__(name)
        self.program = program
        self.kind = kind
        self.static_size = size
        self.symbol = symbol
        self.max = max
        self.worker = False  # `world=`: its points are the ranks of an MPI run
        self.until_value: TensorLike | None = None
        self.loc = user_location()

    @property
    def size(self) -> IndexExpr:
        """The bound as an index expression: an int or the bound symbol."""
        from .index import Const

        if self.kind == "static":
            return Const(self.static_size)
        return SymRef(self.symbol)

    def until(self, condition: TensorLike) -> None:
        """Ends a dynamic dim after the first point where `condition` holds."""
        if self.kind != "dynamic":
            raise ProgramError(
                f"only a dynamic dim has an end condition; '{self.name}' is {self.kind}"
            )
        if (
            not isinstance(condition, TensorLike)
            or condition.dtype != "bool"
            or condition.type.shape
        ):
            raise ProgramError(
                "the end condition of a dynamic dim must be a boolean scalar per point"
            )
        if not any(d is self for d in condition.domain):
            raise ProgramError(
                f"the end condition of '{self.name}' must be defined over '{self.name}'"
            )
        self.until_value = condition

    def __repr__(self) -> str:
        return f"Dim({self.name})"


@dataclass(eq=False)
class Point:
    expr: IndexExpr

    def names(self) -> set[str]:
        return self.expr.names()

    def render(self) -> str:
        return self.expr.render()


@dataclass(eq=False)
class Slice:
    lbs: tuple
    ubs: tuple

    def names(self) -> set[str]:
        out = set()
        for e in self.lbs + self.ubs:
            out |= e.names()
        return out

    def render(self) -> str:
        def bounds(kind, exprs):
            if len(exprs) == 1:
                return exprs[0].render()
            return f"{kind}({', '.join(e.render() for e in exprs)})"

        return f"{bounds('max', self.lbs)} : {bounds('min', self.ubs)}"

    def constant_size(self) -> int | None:
        """The size when it does not depend on any dim or symbol."""
        if len(self.lbs) != 1 or len(self.ubs) != 1:
            return None
        return _constant_difference(self.ubs[0], self.lbs[0])


def accessed_type(source: RecurrentTensor, entries) -> TensorType:
    """Slice sizes (None when symbolic or negative), then the point shape."""
    sizes = []
    for e in entries:
        if isinstance(e, Slice):
            size = e.constant_size()
            sizes.append(size if size is not None and size >= 0 else None)
    return TensorType(tuple(sizes) + tuple(source.shape), source.dtype)


def _constant_difference(a: IndexExpr, b: IndexExpr) -> int | None:
    """a - b if it is a constant: compare the linear forms."""
    la, lb = linear_form(a), linear_form(b)
    if la is None or lb is None:
        return None
    keys = set(la) | set(lb)
    diff = {k: la.get(k, 0) - lb.get(k, 0) for k in keys}
    if any(v != 0 for k, v in diff.items() if k != ""):
        return None
    return diff.get("", 0)


@dataclass(eq=False)
class Operand:
    """A tensor read by a consumer: the source and one entry per source dim,
    written in the consumer's dims."""

    source: RecurrentTensor
    entries: tuple

    @property
    def type(self) -> TensorType:
        """What a body receives: one leading dim per slice (its size when
        constant), then the source's per-point shape. The dialect's parser
        derives block argument types the same way."""
        return accessed_type(self.source, self.entries)

    def is_identity(self) -> bool:
        return all(
            isinstance(e, Point) and isinstance(e.expr, DimRef) and e.expr.name == d.name
            for e, d in zip(self.entries, self.source.domain, strict=True)
        )


class TensorLike:
    """Anything with a domain and a per-point type: tensors and views."""

    program: Program
    domain: tuple
    type: TensorType

    @property
    def shape(self) -> tuple:
        return self.type.shape

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.rank

    def operand(self) -> Operand:
        raise NotImplementedError

    # Operators are defined in ops.py and attached there.


@dataclass(eq=False)
class InputDef:
    name: str


@dataclass(eq=False)
class OpDef:
    op: object  # ops.OpSpec
    operands: list
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class CasesDef:
    cases: list = field(default_factory=list)  # (Condition, Operand, SourceLoc)


@dataclass(eq=False)
class UdfDef:
    callee: str
    operands: list


@dataclass(eq=False)
class CollectiveDef:
    """A collective over a worker dim (collectives.py): `op` is
    "all_reduce", "all_gather", "broadcast", "reduce_scatter" or "shift"."""

    op: str
    operand: Operand
    over: Dim
    reduction: str | None = None  # all_reduce, reduce_scatter: "sum" or "max"
    root: int | None = None  # broadcast
    by: int | None = None  # shift

    @property
    def operands(self) -> list:
        return [self.operand]


class RecurrentTensor(TensorLike):
    """One tensor per point of `domain`, defined by an input, an operator,
    a host callback or by cases (`x[t == 0] = a; x[t > 0] = f(x[t - 1])`)."""

    def __init__(self, program, domain, type_, definition, name=None, loc=None):
        self.program = program
        self.domain = tuple(domain)
        self.type = type_
        self.definition = definition
        self.name = name
        self.loc: SourceLoc = loc or user_location()
        program.add_value(self)

    def operand(self) -> Operand:
        return Operand(self, tuple(Point(d) for d in self.domain))

    def named(self, name: str) -> RecurrentTensor:
        """Gives the value a name (shown in the IR and in diagnostics)."""
        self.name = name
        return self

    def __getitem__(self, key) -> View:
        if isinstance(key, Condition):
            raise ProgramError(
                "a condition selects the points a case defines: assign to it",
                hint="write x[t == 0] = value",
            )
        return View.build(self, key)

    def __setitem__(self, key, value) -> None:
        if key is Ellipsis:
            key = Condition(())  # every point: a `default` case
        if not isinstance(key, Condition):
            raise ProgramError(
                "only a condition can be assigned to, e.g. x[t == 0] = init",
                hint="a value defined by cases is created with program.recurrent(...)",
            )
        if not isinstance(self.definition, CasesDef):
            raise ProgramError(
                f"'{self.name or 'this value'}' is already defined; only values created "
                "with program.recurrent(...) are defined by cases"
            )
        unknown = key.names() - {d.name for d in self.domain} - self.program.bound_symbols()
        if unknown:
            raise ProgramError(
                f"condition uses {', '.join(sorted(unknown))}, which is not in the domain "
                f"[{', '.join(d.name for d in self.domain)}]"
            )
        from .ops import as_tensor

        value = as_tensor(value, self.program, like=self)
        if value.type != self.type:
            raise ProgramError(
                f"case value has type {value.type.mlir()}, but "
                f"'{self.name or 'the value'}' holds {self.type.mlir()} per point",
                hint="cast with .astype(...) or reshape the value",
            )
        extra = {d.name for d in value.domain} - {d.name for d in self.domain}
        if extra:
            raise ProgramError(
                f"case value depends on dims {sorted(extra)} outside the domain "
                f"[{', '.join(d.name for d in self.domain)}]",
                hint="index those dims with a point or a slice",
            )
        self.definition.cases.append((key, value.operand(), user_location()))

    def __repr__(self) -> str:
        dims = ", ".join(d.name for d in self.domain)
        return f"<{self.name or 'tensor'} [{dims}] {self.type.mlir()}>"


class View(TensorLike):
    """A recurrent tensor read through an access (points and slices)."""

    def __init__(self, source: RecurrentTensor, entries: tuple, domain: tuple, type_):
        self.program = source.program
        self.source = source
        self.entries = entries
        self.domain = domain
        self.type = type_

    def operand(self) -> Operand:
        return Operand(self.source, self.entries)

    def __getitem__(self, key):
        raise ProgramError("a view cannot be indexed again; index the original tensor once")

    @staticmethod
    def build(source: RecurrentTensor, key) -> View:
        program = source.program
        items = key if isinstance(key, tuple) else (key,)
        entries: list = [None] * len(source.domain)
        names = [d.name for d in source.domain]
        if len(items) == len(source.domain):
            positions = list(range(len(items)))
        else:
            positions = []
            # A bound symbol stands for its dim: `x[0 : T]` indexes t.
            by_symbol = {d.symbol: d.name for d in program.dims if d.symbol}
            for item in items:
                item_dims = {by_symbol.get(n, n) for n in _item_names(item)}
                outside = sorted(item_dims & set(program.dims_by_name()) - set(names))
                if outside and not item_dims & set(names):
                    raise ProgramError(
                        f"index '{_render_item(item)}' is for dim '{outside[0]}', which is not "
                        f"in the domain [{', '.join(names)}] of "
                        f"'{source.name or 'this tensor'}'",
                        hint="a tensor is indexed along its own dims only",
                    )
                mentioned = sorted(item_dims & set(names))
                if len(mentioned) != 1:
                    raise ProgramError(
                        f"cannot tell which dim of [{', '.join(names)}] the index "
                        f"'{_render_item(item)}' is for",
                        hint="give one index per dim, e.g. x[b, 0 : t + 1]",
                    )
                positions.append(names.index(mentioned[0]))
        for pos, item in zip(positions, items, strict=True):
            if entries[pos] is not None:
                raise ProgramError(f"dim '{names[pos]}' is indexed twice")
            entries[pos] = _to_entry(item, source.domain[pos])
        for pos, entry in enumerate(entries):
            if entry is None:
                entries[pos] = Point(source.domain[pos])
        mentioned = set()
        for e in entries:
            mentioned |= e.names()
        dims = program.dims_by_name()
        symbols = program.bound_symbols()
        unknown = mentioned - set(dims) - symbols
        if unknown:
            raise ProgramError(
                f"index uses unknown name(s) {', '.join(sorted(unknown))}",
                hint=f"known dims: {', '.join(dims)}; "
                f"bound symbols: {', '.join(sorted(symbols)) or 'none'}",
            )
        domain = program.ordered_dims(mentioned & set(dims))
        for e in entries:
            size = e.constant_size() if isinstance(e, Slice) else None
            if size is not None and size <= 0:
                raise ProgramError(f"slice is empty or negative (size {size})")
        return View(source, tuple(entries), domain, accessed_type(source, entries))


def _item_names(item) -> set[str]:
    if isinstance(item, slice):
        out = set()
        for b in (item.start, item.stop):
            if isinstance(b, (IndexExpr, BoundList)):
                out |= b.names()
        return out
    if isinstance(item, IndexExpr):
        return item.names()
    return set()


def _render_item(item) -> str:
    if isinstance(item, slice):
        return f"{item.start}:{item.stop}"
    return str(item)


def _to_entry(item, dim: Dim):
    if isinstance(item, slice):
        if item.step is not None:
            raise ProgramError("slices with a step are not supported")
        lbs = _bounds(item.start, "max", default=0)
        ubs = _bounds(item.stop, "min", default=dim.size)
        return Slice(lbs, ubs)
    if isinstance(item, BoundList):
        raise ProgramError(f"pdg.{item.kind}(...) is only valid as a slice bound")
    return Point(as_index(item))


def _bounds(value, kind: str, default) -> tuple:
    if value is None:
        return (as_index(default),)
    if isinstance(value, BoundList):
        if value.kind != kind:
            raise ProgramError(
                f"pdg.{value.kind}(...) cannot be a slice "
                f"{'lower' if kind == 'max' else 'upper'} bound",
                hint="use pdg.max for the start and pdg.min for the end of a slice",
            )
        return value.exprs
    return (as_index(value),)
