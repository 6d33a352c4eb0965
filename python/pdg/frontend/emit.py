"""Emitting a frontend Program as a pdg.graph, in the dialect's text form.

Every recurrent tensor becomes one node (inputs, udfs and cases nodes map
directly). Views never become nodes: their access goes into the consumer's
input list. A node used only inside the cases that hold under a condition
(e.g. the `f(x[t - 1])` of `x[t > 0] = f(x[t - 1])`) is restricted to that
condition, so that it never reads outside its producer's domain.
"""

from __future__ import annotations

import re

from .body import Body, Val
from .errors import ProgramError
from .index import Condition
from .tensor import (
    CasesDef,
    CollectiveDef,
    InputDef,
    OpDef,
    Operand,
    RecurrentTensor,
    UdfDef,
)

_UNUSED = "unused"  # lattice bottom: no use seen yet
_ANY = None  # lattice top: needed everywhere


def value_type(rt: RecurrentTensor) -> str:
    return f"!pdg.value<[{', '.join(d.name for d in rt.domain)}], {rt.type.mlir()}>"


def operands_of(rt: RecurrentTensor) -> list[Operand]:
    """The reads that define a value: its op's or udf's operands, or each
    case's value; none for an input."""
    d = rt.definition
    if isinstance(d, OpDef):
        return d.operands
    if isinstance(d, (UdfDef, CollectiveDef)):
        return d.operands
    if isinstance(d, CasesDef):
        return [op for _, op, _ in d.cases]
    return []


def needed_where(program) -> dict[int, object]:
    """For each op node (by id): the one condition under which it is needed
    (None: everywhere). Restrictions flow only through same-point reads;
    emission and the gradient emit a node only where it is needed."""
    state: dict[int, object] = {id(v): _UNUSED for v in program.values}
    roots = {id(v) for _, v in program.outputs}
    roots |= {id(d.until_value) for d in program.dims if d.until_value is not None}
    for v in program.values:
        if not isinstance(v.definition, OpDef):
            state[id(v)] = _ANY
    for r in roots:
        state[r] = _ANY

    def join(old, new):
        if old is _UNUSED:
            return new
        if old is _ANY or new is _ANY:
            return _ANY
        return old if old.key() == new.key() else _ANY

    bound = program.bound_symbols()
    changed = True
    while changed:
        changed = False
        # Consumers before what they read (values are made in that order,
        # reversed): a restriction reaches a chain of producers in one sweep.
        for consumer in reversed(program.values):
            here = state[id(consumer)]
            if here is _UNUSED:
                continue
            uses = []
            d = consumer.definition
            if isinstance(d, CasesDef):
                uses = [(op, cond if cond.constraints else _ANY) for cond, op, _ in d.cases]
            else:
                uses = [(op, here) for op in operands_of(consumer)]
            for op, cond in uses:
                src = op.source
                if not isinstance(src.definition, OpDef):
                    continue
                ok = (
                    cond is not _ANY
                    and op.is_identity()
                    and cond.names() <= {x.name for x in src.domain} | bound
                )
                new = join(state[id(src)], cond if ok else _ANY)
                if new is not state[id(src)] and not (
                    isinstance(new, Condition)
                    and isinstance(state[id(src)], Condition)
                    and new.key() == state[id(src)].key()
                ):
                    state[id(src)] = new
                    changed = True
    return state


class _Names:
    def __init__(self):
        self.used: set[str] = set()
        self.by_id: dict[int, str] = {}
        # Per base name, the suffix to try first: every one before it is
        # taken (thousands of nodes share a base, as `add`).
        self.next_suffix: dict[str, int] = {}

    def of(self, rt: RecurrentTensor) -> str:
        if id(rt) in self.by_id:
            return self.by_id[id(rt)]
        base = rt.name or _default_name(rt)
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
        if not re.match(r"^[A-Za-z_]", base):
            base = "v" + base
        n = self.next_suffix.get(base, 0)
        name = f"{base}_{n}" if n else base
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.next_suffix[base] = n + 1
        self.used.add(name)
        self.by_id[id(rt)] = name
        return name


def _default_name(rt: RecurrentTensor) -> str:
    d = rt.definition
    if isinstance(d, OpDef):
        return d.attrs.get("name") or d.op.name
    if isinstance(d, CollectiveDef):
        return d.op
    return "v"


def _inputs(names: _Names, operands: list[Operand], arg_prefix: str | None) -> str:
    parts = []
    for i, op in enumerate(operands):
        entries = ", ".join(e.render() for e in op.entries)
        read = f"%{names.of(op.source)}[{entries}] : {value_type(op.source)}"
        parts.append(f"%{arg_prefix}{i} = {read}" if arg_prefix else read)
    return "(" + ", ".join(parts) + ")" if parts else ""


def _indent(lines: list[str], pad: str) -> list[str]:
    return [pad + line for line in lines]


def _node(names: _Names, rt: RecurrentTensor, restriction) -> list[str]:
    d = rt.definition
    dims = ", ".join(x.name for x in rt.domain)
    head = f'%{names.of(rt)} = pdg.node "{names.of(rt)}" [{dims}]'
    loc = rt.loc.mlir()
    point = rt.type.mlir()
    if isinstance(d, CasesDef):
        if not d.cases:
            raise ProgramError(
                f"'{rt.name or 'value'}' is declared recurrent but no case defines it",
                loc=rt.loc,
                hint="define it with x[cond] = value",
            )
        lines = [f"{head} -> {point}"]
        for cond, op, _ in d.cases:
            src_type = op.type
            head_case = f"case ({cond.render()})" if cond.constraints else "default"
            lines.append(f"  {head_case} {_inputs(names, [op], 'a')} {{")
            if src_type != rt.type:
                raise ProgramError("case value type differs from the value's type", loc=rt.loc)
            lines.append(f"    pdg.yield %a0 : {point}")
            lines.append("  }")
        lines[-1] += f" {loc}"
        return lines
    assert isinstance(d, OpDef)
    body = Body(indent="    " if restriction is not _ANY else "  ")
    args = [Val(f"%a{i}", op.type) for i, op in enumerate(d.operands)]
    result = d.op.emit(body, args, rt.type, d.attrs)
    if result.type != rt.type:
        raise RuntimeError(f"internal error: {d.op.name} emitted {result.type}, not {rt.type}")
    body.line(f"pdg.yield {result.name} : {point}")
    if restriction is _ANY:
        return [f"{head} {_inputs(names, d.operands, 'a')} -> {point} {{", *body.lines, f"}} {loc}"]
    return [
        f"{head} -> {point}",
        f"  case ({restriction.render()}) {_inputs(names, d.operands, 'a')} {{",
        *body.lines,
        f"  }} {loc}",
    ]


def _collective(names: _Names, rt: RecurrentTensor, d: CollectiveDef) -> str:
    src = d.operand.source
    how = f"{d.reduction} " if d.op in ("all_reduce", "reduce_scatter") else ""
    root = f" from {d.root}" if d.op == "broadcast" else f" by {d.by}" if d.op == "shift" else ""
    return (
        f"%{names.of(rt)} = pdg.{d.op} {how}%{names.of(src)}{root} over @{d.over.name} "
        f'{{name = "{names.of(rt)}"}} : {value_type(src)} -> {value_type(rt)}'
    )


def _holds_at_origin(cond: Condition) -> bool:
    """Whether a case condition holds at the first point (every dim 0),
    with bound symbols taken large."""
    from .index import Const, DimRef, Div, Scaled, Sum, SymRef

    def value(e) -> int:
        if isinstance(e, Const):
            return e.value
        if isinstance(e, SymRef):
            return 1 << 30
        if isinstance(e, DimRef):
            return 0
        if isinstance(e, Sum):
            return value(e.lhs) + value(e.rhs)
        if isinstance(e, Scaled):
            return value(e.expr) * e.factor
        if isinstance(e, Div):
            v = value(e.expr)
            return v // e.divisor if e.op == "floordiv" else v % e.divisor
        raise TypeError(e)

    return all(
        (value(c.expr) == 0) if c.kind == "==" else (value(c.expr) >= 0) for c in cond.constraints
    )


def check_base_cases(program) -> None:
    """A recurrence (a value defined by cases that reads itself) must be
    defined at its first point."""
    for v in program.values:
        d = v.definition
        if isinstance(d, CasesDef) and d.cases and v.domain:
            if not any(_holds_at_origin(cond) for cond, _, _ in d.cases) and _reads_itself(v):
                first = ", ".join(f"{x.name} = 0" for x in v.domain)
                raise ProgramError(
                    f"recurrence without a base case: no case defines "
                    f"'{v.name or 'the value'}' at its first point ({first})",
                    loc=v.loc,
                    hint=f"add one, e.g. {v.name or 'x'}[{v.domain[-1].name} == 0] = init",
                )


def _reads_itself(value) -> bool:
    seen, stack = set(), [op.source for op in operands_of(value)]
    while stack:
        v = stack.pop()
        if v is value:
            return True
        if id(v) not in seen:
            seen.add(id(v))
            stack.extend(op.source for op in operands_of(v))
    return False


def emit_program(program) -> str:
    check_base_cases(program)
    names = _Names()
    # Reserve the names of inputs and named values first, so they keep them.
    for v in program.values:
        if v.name:
            names.of(v)
    restrictions = needed_where(program)
    lines = [f"pdg.graph @{program.name} {{"]
    for dim in program.dims:
        if dim.kind == "static":
            lines.append(f"  pdg.dim @{dim.name} < {dim.static_size} {dim.loc.mlir()}")
            continue
        kind = "world" if dim.worker else dim.kind
        text = f"  pdg.dim @{dim.name} < {kind} {dim.symbol}"
        if dim.max is not None:
            text += f" max {dim.max}"
        if dim.kind == "dynamic":
            if dim.until_value is None:
                raise ProgramError(
                    f"dynamic dim '{dim.name}' never ends",
                    loc=dim.loc,
                    hint=f"give its end condition with {dim.name}.until(done)",
                )
            u = dim.until_value
            text += f" until %{names.of(u)} : {value_type(u)}"
        lines.append(f"{text} {dim.loc.mlir()}")
    for v in program.values:
        d = v.definition
        if isinstance(d, InputDef):
            lines.append(
                f'  %{names.of(v)} = pdg.input "{d.name}" : {value_type(v)} {v.loc.mlir()}'
            )
        elif isinstance(d, UdfDef):
            dims = ", ".join(x.name for x in v.domain)
            lines.append(
                f'  %{names.of(v)} = pdg.udf "{d.callee}" [{dims}] '
                f"{_inputs(names, d.operands, None)} -> {v.type.mlir()} {v.loc.mlir()}"
            )
        elif isinstance(d, CollectiveDef):
            lines.append(f"  {_collective(names, v, d)} {v.loc.mlir()}")
        else:
            restriction = restrictions.get(id(v), _ANY)
            if restriction == _UNUSED:
                restriction = _ANY
            lines += _indent(_node(names, v, restriction), "  ")
    for name, v in program.outputs:
        lines.append(f'  pdg.output "{name}" %{names.of(v)} : {value_type(v)}')
    lines.append("}")
    return "\n".join(lines) + "\n"
