"""A pdg.graph read into plain structures for the analyses: dims, values
(inputs, nodes, udfs) with their domains and point types, and every read
(consumer case, producer, access) with its expressions as isl text.

Expressions are rendered in isl's syntax with the dims' own names, so that
the islpy sets and maps of `polyhedral.py` read like the IR."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from pdg import _ext
from pdg.ir.collectives import COLLECTIVES
from pdg.ir.source import format_location

# Bytes per element in memory (booleans take a byte: pdg-widen-i1-memrefs).
ELEMENT_BYTES = {
    "f64": 8,
    "f32": 4,
    "f16": 2,
    "bf16": 2,
    "i64": 8,
    "i32": 4,
    "i16": 2,
    "i8": 1,
    "i1": 1,
    "index": 8,
}


@dataclass(eq=False)
class Dim:
    name: str
    kind: str  # static | launch | dynamic
    size: int | None  # static size, or max of a launch/dynamic dim
    symbol: str | None
    until: str | None = None  # name of the value ending a dynamic dim
    worker: bool = False  # `world W`: a launch dim whose points are the ranks

    @property
    def bound(self) -> str:
        """The bound as isl text: an integer or the bound symbol."""
        return str(self.size) if self.kind == "static" else self.symbol


@dataclass(eq=False)
class Read:
    """One input of one case: the consumer reads `producer` through
    `entries` (per producer dim: ("point", expr) or ("slice", lbs, ubs))."""

    consumer: Value
    case: int
    index: int  # operand index in the consumer
    producer: Value
    entries: list
    condition: list  # the case's constraints, isl text
    affine: list = field(default_factory=list)  # the entries as ir.AffineExprs


@dataclass(eq=False)
class Value:
    name: str
    kind: str  # input | node | udf | collective
    domain: tuple[str, ...]
    shape: tuple  # per-point shape, None for `?`
    element: str
    op: ir.Operation
    loc: str
    symbols: tuple[str, ...] = ()
    conditions: list = field(default_factory=list)  # per case: constraints
    reads: list[Read] = field(default_factory=list)
    is_output: bool = False
    # A collective's op ("all_reduce", "all_gather", "broadcast",
    # "reduce_scatter", "shift"), its worker dim ("over"), and "reduction",
    # "root" or "by"; None for other values.
    collective: dict | None = None

    @property
    def point_bytes(self) -> int | None:
        """Bytes of one point, or None if the shape is symbolic."""
        n = ELEMENT_BYTES.get(self.element, 4)
        for d in self.shape:
            if d is None:
                return None
            n *= d
        return n


@dataclass(eq=False)
class Graph:
    name: str
    op: ir.Operation
    dims: dict[str, Dim]
    values: list[Value]
    outputs: list[tuple[str, Value]]

    def value(self, name: str) -> Value:
        for v in self.values:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def symbols(self) -> list[str]:
        return [d.symbol for d in self.dims.values() if d.symbol]

    @property
    def reads(self) -> list[Read]:
        return [r for v in self.values for r in v.reads]


def isl_expr(e: ir.AffineExpr, dims: list[str], symbols: list[str]) -> str:
    """An affine expression in isl syntax with the given names."""
    e = e.maybe_downcast()

    def sub(x):
        return isl_expr(x, dims, symbols)

    if isinstance(e, ir.AffineConstantExpr):
        return str(e.value)
    if isinstance(e, ir.AffineDimExpr):
        return dims[e.position]
    if isinstance(e, ir.AffineSymbolExpr):
        return symbols[e.position]
    if isinstance(e, ir.AffineAddExpr):
        return f"({sub(e.lhs)} + {sub(e.rhs)})"
    if isinstance(e, ir.AffineMulExpr):
        return f"({sub(e.lhs)} * {sub(e.rhs)})"
    if isinstance(e, ir.AffineFloorDivExpr):
        return f"floor(({sub(e.lhs)})/{sub(e.rhs)})"
    if isinstance(e, ir.AffineCeilDivExpr):
        return f"ceil(({sub(e.lhs)})/{sub(e.rhs)})"
    if isinstance(e, ir.AffineModExpr):
        return f"(({sub(e.lhs)}) mod {sub(e.rhs)})"
    raise TypeError(f"unknown affine expression {e}")


def _shape(t: ir.RankedTensorType) -> tuple:
    return tuple(None if ir.ShapedType.is_dynamic_size(d) else d for d in t.shape)


def _element(t: ir.RankedTensorType) -> str:
    return str(t.element_type)


def read_graph(graph_op: ir.Operation) -> Graph:
    graph_op = graph_op.operation
    block = graph_op.regions[0].blocks[0]
    dims: dict[str, Dim] = {}
    values: list[Value] = []
    by_result: dict = {}
    outputs = []
    pending = []
    for op in block.operations:
        op = op.operation
        name = op.name
        attrs = op.attributes
        if name == "pdg.dim":
            kind = _ext.bound_kind(attrs["kind"])
            size = ir.IntegerAttr(attrs["size"]).value if "size" in attrs else None
            symbol = ir.StringAttr(attrs["bound"]).value if "bound" in attrs else None
            dims[ir.StringAttr(attrs["sym_name"]).value] = Dim(
                ir.StringAttr(attrs["sym_name"]).value,
                kind,
                size,
                symbol,
                worker="worker" in attrs,
            )
            if len(op.operands):
                pending.append((ir.StringAttr(attrs["sym_name"]).value, op.operands[0]))
            continue
        if name == "pdg.output":
            outputs.append((ir.StringAttr(attrs["name"]).value, op.operands[0]))
            continue
        if name not in ("pdg.input", "pdg.node", "pdg.udf", *COLLECTIVES):
            continue
        vtype = _ext.ValueType(op.results[0].type)
        point = ir.RankedTensorType(vtype.point_type)
        if name == "pdg.udf":
            label = ir.StringAttr(attrs["callee"]).value
        else:
            label = ir.StringAttr(attrs["name"]).value if "name" in attrs else f"v{len(values)}"
        value = Value(
            label,
            "collective" if name in COLLECTIVES else name.split(".")[1],
            tuple(vtype.domain),
            _shape(point),
            _element(point),
            op,
            format_location(op.location),
        )
        if "symbols" in attrs:
            value.symbols = tuple(ir.StringAttr(s).value for s in ir.ArrayAttr(attrs["symbols"]))
        values.append(value)
        by_result[op.results[0]] = value
    _unique_names(values)
    for value in values:
        if value.kind == "collective":
            _read_collective(value, by_result, dims)
        elif value.kind != "input":
            _read_cases(value, by_result)
    for dim_name, until in pending:
        dims[dim_name].until = by_result[until].name
    named_outputs = []
    for out_name, operand in outputs:
        v = by_result[operand]
        v.is_output = True
        named_outputs.append((out_name, v))
    name = ir.StringAttr(graph_op.attributes["sym_name"]).value
    return Graph(name, graph_op, dims, values, named_outputs)


def _unique_names(values: list[Value]) -> None:
    seen: dict[str, int] = {}
    for v in values:
        if v.name in seen:
            seen[v.name] += 1
            v.name = f"{v.name}_{seen[v.name]}"
        else:
            seen[v.name] = 0


def _read_collective(value: Value, by_result: dict, dims: dict[str, Dim]) -> None:
    """A collective reads its input at its own point of each shared dim and
    every rank's point of the worker dim: `x[0 : W, b]`."""
    op = value.op
    attrs = op.attributes
    over = ir.FlatSymbolRefAttr(attrs["over"]).value
    info: dict = {"op": op.name.split(".")[1], "over": over}
    if "reduction" in attrs:  # `#pdg<reduction sum>`
        info["reduction"] = str(attrs["reduction"]).rstrip(">").split()[-1]
    if "root" in attrs:
        info["root"] = ir.IntegerAttr(attrs["root"]).value
    if "by" in attrs:
        info["by"] = ir.IntegerAttr(attrs["by"]).value
    value.collective = info
    value.symbols = (dims[over].symbol,)
    value.conditions = [[]]
    producer = by_result[op.operands[0]]
    entries, affine = [], []
    with op.context:
        for d in producer.domain:
            if d == over:
                entries.append(("slice", ["0"], [dims[over].symbol]))
                affine.append(
                    ("slice", [ir.AffineConstantExpr.get(0)], [ir.AffineSymbolExpr.get(0)])
                )
            else:
                entries.append(("point", d))
                affine.append(("point", ir.AffineDimExpr.get(value.domain.index(d))))
    value.reads.append(Read(value, 0, 0, producer, entries, [], affine))


def _read_cases(value: Value, by_result: dict) -> None:
    op = value.op
    attrs = op.attributes
    dims = list(value.domain)
    syms = list(value.symbols)
    accesses = [_ext.AccessAttr(a) for a in ir.ArrayAttr(attrs["accesses"])]
    if value.kind == "udf":
        counts = [len(op.operands)]
        value.conditions = [[]]
    else:
        counts = [len(r.blocks[0].arguments) for r in op.regions]
        for c in ir.ArrayAttr(attrs["conditions"]):
            cmap, eqs = _ext.integer_set_parts(c)
            constraints = []
            for expr, eq in zip(cmap.results, eqs, strict=True):
                text = isl_expr(expr, dims, syms)
                constraints.append(f"{text} = 0" if eq else f"{text} >= 0")
            value.conditions.append(constraints)
    index = 0
    for case, count in enumerate(counts):
        for _ in range(count):
            access = accesses[index]
            results = list(access.exprs.results)
            layout = access.layout
            entries, affine, k = [], [], 0
            for i in range(access.num_entries):
                nl, nu = layout[2 * i], layout[2 * i + 1]
                lbs, ubs = results[k : k + nl], results[k + nl : k + nl + nu]
                k += nl + nu
                affine.append(("slice", lbs, ubs) if nu else ("point", lbs[0]))
                lbs = [isl_expr(e, dims, syms) for e in lbs]
                ubs = [isl_expr(e, dims, syms) for e in ubs]
                entries.append(("slice", lbs, ubs) if nu else ("point", lbs[0]))
            producer = by_result[op.operands[index]]
            value.reads.append(
                Read(value, case, index, producer, entries, value.conditions[case], affine)
            )
            index += 1
