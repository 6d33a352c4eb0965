"""A pdg.graph read into plain Python structures, bodies compiled.

Everything the engine needs per point -- dims, each value's domain and point
type, accesses as affine trees, case conditions, compiled bodies -- is read
from the MLIR objects once, here. Program-level mistakes the engine would
otherwise hit mid-run (an unsupported op, an `until` over a dynamic dim) are
reported now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir

from pdg import _ext
from pdg.ir.collectives import COLLECTIVES
from pdg.ir.source import format_location

from .affine import Condition, Const, Dim, Expr, Sym, condition_from_attr, from_mlir
from .body import Compiler, Region
from .errors import InterpreterError
from .ops import HANDLERS
from .types import TensorType, convert_type


@dataclass(eq=False)
class DimInfo:
    name: str
    kind: str  # "static", "launch" or "dynamic"
    size: int | None  # the static size, or the max of a launch/dynamic dim
    symbol: str | None  # the bound symbol of a launch/dynamic dim
    loc: str
    until: ValueInfo | None = None
    worker: bool = False  # `world W`: its points are the ranks (simulated here)
    # Dims of `until`'s domain other than this one: a dynamic dim ends
    # separately for each of their assignments ("groups").
    group_dims: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Entry:
    """One entry of an access: a point (`ubs` is None) or a slice."""

    lbs: tuple[Expr, ...]
    ubs: tuple[Expr, ...] | None

    @property
    def is_slice(self) -> bool:
        return self.ubs is not None


@dataclass(eq=False)
class Access:
    producer: ValueInfo
    entries: tuple[Entry, ...]
    arg_type: TensorType  # what the consumer receives
    text: str  # e.g. "x[b, max(0, t - 3) : t + 1]", for messages


@dataclass(eq=False)
class Case:
    index: int
    condition: Condition
    inputs: tuple[Access, ...]
    body: Region
    num_slots: int


@dataclass(frozen=True)
class Collective:
    """What a collective does with the ranks' points it reads (the whole
    worker dim, through its value's one access)."""

    op: str  # "all_reduce", "all_gather", "broadcast", "reduce_scatter" or "shift"
    over: str  # the worker dim
    reduction: str | None = None  # all_reduce, reduce_scatter: "sum" or "max"
    root: int | None = None  # broadcast
    by: int | None = None  # shift: rank r gets rank (r - by) mod W's point


@dataclass(eq=False)
class ValueInfo:
    """A pdg.input, pdg.node, pdg.udf or collective result."""

    id: int
    kind: str  # "input", "node", "udf" or "collective"
    name: str
    domain: tuple[str, ...]
    point: TensorType
    loc: str
    symbols: tuple[str, ...] = ()
    cases: list[Case] = field(default_factory=list)  # nodes
    accesses: list[Access] = field(default_factory=list)  # udfs
    callee: str | None = None  # udfs
    input_name: str | None = None  # inputs
    collective: Collective | None = None  # collectives (their read: `accesses`)

    def describe(self) -> str:
        return f"{self.kind} '{self.name}'"


@dataclass(eq=False)
class Program:
    name: str
    dims: dict[str, DimInfo]
    values: list[ValueInfo]
    inputs: dict[str, ValueInfo]
    outputs: dict[str, ValueInfo]
    callees: list[str]
    # The MLIR module owning the ops that compiled bodies still refer to.
    module: ir.Module | None


def _kind_of(dim_op: ir.Operation) -> str:
    return _ext.bound_kind(dim_op.attributes["kind"])


def _render_entry(e: Entry, dims, syms) -> str:
    def bound(exprs: tuple[Expr, ...], fn: str) -> str:
        parts = [x.render(dims, syms) for x in exprs]
        return parts[0] if len(parts) == 1 else f"{fn}({', '.join(parts)})"

    if not e.is_slice:
        return e.lbs[0].render(dims, syms)
    return f"{bound(e.lbs, 'max')} : {bound(e.ubs, 'min')}"


def _read_access(
    attr: ir.Attribute, producer: ValueInfo, arg_type: TensorType, dims, syms
) -> Access:
    acc = _ext.AccessAttr(attr)
    exprs = [from_mlir(e) for e in acc.exprs.results]
    layout = list(acc.layout)
    entries, pos = [], 0
    for j in range(acc.num_entries):
        n_lbs, n_ubs = layout[2 * j], layout[2 * j + 1]
        lbs = tuple(exprs[pos : pos + n_lbs])
        pos += n_lbs
        ubs = tuple(exprs[pos : pos + n_ubs]) if n_ubs else None
        pos += n_ubs
        entries.append(Entry(lbs, ubs))
    text = f"{producer.name}[{', '.join(_render_entry(e, dims, syms) for e in entries)}]"
    return Access(producer, tuple(entries), arg_type, text)


def _value_name(op: ir.Operation, kind: str) -> str:
    if kind == "input":
        return ir.StringAttr(op.attributes["name"]).value
    if kind == "udf":
        return ir.StringAttr(op.attributes["callee"]).value
    if "name" in op.attributes:
        return ir.StringAttr(op.attributes["name"]).value
    if kind == "collective":
        return op.name.split(".")[1]
    return op.results[0].get_name()


def select_graph(program, graph: str | None) -> tuple[ir.Operation, ir.Module | None]:
    """The pdg.graph to run from a module, an op or a path to a .mlir file."""
    module = None
    if isinstance(program, (str, Path)):
        from pdg.ir.context import make_context
        from pdg.ir.source import ParseFailure, parse_file

        try:
            module = parse_file(program, make_context())
        except ParseFailure as e:
            raise InterpreterError(f"cannot parse {program}:\n{e}") from None
        except OSError as e:
            raise InterpreterError(f"cannot read {program}: {e.strerror}") from None
        program = module
    if isinstance(program, ir.Module):
        module = program
        graphs = [o.operation for o in program.body.operations if o.operation.name == "pdg.graph"]
    else:
        op = program.operation if hasattr(program, "operation") else program
        graphs = [op] if op.name == "pdg.graph" else []
        if op.name == "builtin.module":
            graphs = [
                o.operation
                for o in op.regions[0].blocks[0].operations
                if o.operation.name == "pdg.graph"
            ]
    names = [ir.StringAttr(g.attributes["sym_name"]).value for g in graphs]
    if not graphs:
        raise InterpreterError(
            "no pdg.graph to interpret", hint="pass a module holding a pdg.graph"
        )
    if graph is None:
        return graphs[0], module
    if graph not in names:
        raise InterpreterError(f"no pdg.graph named '{graph}'", hint=f"graphs: {', '.join(names)}")
    return graphs[names.index(graph)], module


def load_program(program, graph: str | None = None) -> Program:
    graph_op, module = select_graph(program, graph)
    ops = [o.operation for o in graph_op.regions[0].blocks[0].operations]
    values: list[ValueInfo] = []
    by_value: dict[ir.Value, ValueInfo] = {}
    dims: dict[str, DimInfo] = {}
    inputs: dict[str, ValueInfo] = {}

    # Values first: the graph region lets a node read a value defined later.
    for op in ops:
        if op.name == "pdg.dim":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            size = int(op.attributes["size"].value) if "size" in op.attributes else None
            symbol = (
                ir.StringAttr(op.attributes["bound"]).value if "bound" in op.attributes else None
            )
            dims[name] = DimInfo(name, _kind_of(op), size, symbol, format_location(op.location))
            dims[name].worker = "worker" in op.attributes
        elif op.name in ("pdg.input", "pdg.node", "pdg.udf", *COLLECTIVES):
            kind = "collective" if op.name in COLLECTIVES else op.name.split(".")[1]
            vt = _ext.ValueType(op.results[0].type)
            loc = format_location(op.location)
            try:
                point = convert_type(vt.point_type)
            except InterpreterError as e:
                raise e.add_where(f"{kind} at {loc}") from None
            info = ValueInfo(
                id=len(values),
                kind=kind,
                name=_value_name(op, kind),
                domain=tuple(vt.domain),
                point=point,
                loc=loc,
            )
            if "symbols" in op.attributes:
                info.symbols = tuple(ir.StringAttr(s).value for s in op.attributes["symbols"])
            if kind == "input":
                info.input_name = info.name
                inputs[info.name] = info
            if kind == "udf":
                info.callee = info.name
            values.append(info)
            by_value[op.results[0]] = info

    outputs: dict[str, ValueInfo] = {}
    for op in ops:
        if op.name == "pdg.dim" and len(op.operands):
            dim = dims[ir.StringAttr(op.attributes["sym_name"]).value]
            dim.until = by_value[op.operands[0]]
        elif op.name == "pdg.output":
            outputs[ir.StringAttr(op.attributes["name"]).value] = by_value[op.operands[0]]
        elif op.name in ("pdg.node", "pdg.udf"):
            _read_consumer(op, by_value[op.results[0]], by_value)
        elif op.name in COLLECTIVES:
            _read_collective(op, by_value[op.results[0]], by_value[op.operands[0]], dims)
    _check_dims(dims)
    callees = sorted({v.callee for v in values if v.kind == "udf" and v.callee})
    name = ir.StringAttr(graph_op.attributes["sym_name"]).value
    return Program(name, dims, values, inputs, outputs, callees, module)


def _read_consumer(op: ir.Operation, info: ValueInfo, by_value: dict) -> None:
    accesses = list(op.attributes["accesses"])
    producers = [by_value[v] for v in op.operands]
    if info.kind == "udf":
        for attr, producer in zip(accesses, producers, strict=True):
            arg_type = _accessed_type(producer, _ext.AccessAttr(attr))
            info.accesses.append(_read_access(attr, producer, arg_type, info.domain, info.symbols))
        return
    conditions = list(op.attributes["conditions"])
    start = 0
    for k, region in enumerate(op.regions):
        block = region.blocks[0]
        n = len(block.arguments)
        inputs = []
        for i in range(start, start + n):
            arg_type = convert_type(block.arguments[i - start].type)
            assert isinstance(arg_type, TensorType)
            inputs.append(
                _read_access(accesses[i], producers[i], arg_type, info.domain, info.symbols)
            )
        start += n
        compiler = Compiler(HANDLERS)
        try:
            body = compiler.region(region)
        except InterpreterError as e:
            raise e.add_where(f"{info.describe()} ({info.loc}), case #{k}") from None
        info.cases.append(
            Case(k, condition_from_attr(conditions[k]), tuple(inputs), body, len(compiler.slots))
        )


def _read_collective(
    op: ir.Operation, info: ValueInfo, producer: ValueInfo, dims: dict[str, DimInfo]
) -> None:
    """A collective reads its input at its own point of every dim but the
    worker dim, and every rank's point of that: `x[0 : W, b]` (a result
    over the worker dim too, a reduce-scatter's or a shift's, still reads
    every rank's point and picks what its rank gets)."""
    attrs = op.attributes
    over = ir.FlatSymbolRefAttr(attrs["over"]).value
    kind = op.name.split(".")[1]
    reduction = str(attrs["reduction"]) if "reduction" in attrs else None
    if reduction is not None:  # printed as `#pdg<reduction sum>` or `sum`
        reduction = reduction.rstrip(">").split()[-1].split("<")[-1]
    root = ir.IntegerAttr(attrs["root"]).value if "root" in attrs else None
    by = ir.IntegerAttr(attrs["by"]).value if "by" in attrs else None
    info.collective = Collective(kind, over, reduction, root, by)
    world = dims[over].symbol
    info.symbols = (world,) if world else ()
    entries = []
    for d in producer.domain:
        if d == over:
            entries.append(Entry((Const(0),), (Sym(0),)))
        else:
            entries.append(Entry((Dim(info.domain.index(d)),), None))
    arg_type = TensorType((None, *producer.point.shape), producer.point.elem)
    rendered = ", ".join(_render_entry(e, info.domain, info.symbols) for e in entries)
    text = f"{producer.name}[{rendered}]"
    info.accesses.append(Access(producer, tuple(entries), arg_type, text))


def _accessed_type(producer: ValueInfo, acc) -> TensorType:
    """The array a udf receives: slice sizes (unknown) then the point shape."""
    n_slices = sum(1 for j in range(acc.num_entries) if acc.is_slice(j))
    return TensorType((None,) * n_slices + producer.point.shape, producer.point.elem)


def _check_dims(dims: dict[str, DimInfo]) -> None:
    for d in dims.values():
        if d.kind != "dynamic":
            continue
        if d.until is None:
            raise InterpreterError(f"dynamic dim '{d.name}' has no 'until' value", where=d.loc)
        d.group_dims = tuple(x for x in d.until.domain if x != d.name)
        for g in d.group_dims:
            if dims[g].kind == "dynamic":
                raise InterpreterError(
                    f"the 'until' value of dynamic dim '{d.name}' is also over dynamic dim "
                    f"'{g}': nested dynamic dims are not supported by the interpreter",
                    where=d.loc,
                )
