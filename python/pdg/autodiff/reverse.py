"""Reverse-mode differentiation of a frontend program, as new nodes.

`grad(loss, params)` is the gradient of the sum of `loss` over its points
with respect to each parameter point, parameters taken as leaves (a
parameter `w[i]` updated from `w[i - 1]` is not differentiated through its
own update). For every node between the parameters and the loss it adds an
adjoint node over the same domain: the sum, over the node's consumers, of
their vector-Jacobian products (rules.py) carried back through the inverse
of each read's access (transpose.py). Adjoints are declared before they are
defined, so a recurrence `x[t] = f(x[t - 1])` gets the backward recurrence
`dx[t] = ... dx[t + 1] ...` (backpropagation through time) by itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pdg.frontend import ops
from pdg.frontend.adjoint_ops import zeros
from pdg.frontend.collectives import all_reduce
from pdg.frontend.dtypes import is_float
from pdg.frontend.emit import needed_where, operands_of
from pdg.frontend.errors import ProgramError
from pdg.frontend.index import Condition
from pdg.frontend.tensor import (
    CasesDef,
    CollectiveDef,
    OpDef,
    RecurrentTensor,
    TensorLike,
    UdfDef,
    View,
)

from . import rules
from .collectives import collective_vjp, differentiable_collective
from .transpose import transpose, transpose_einsum


def grad(loss: TensorLike, params: Sequence[TensorLike]) -> list[RecurrentTensor]:
    """d sum(loss) / d param, one gradient per parameter, each over the
    parameter's domain with its type. A parameter the loss does not depend
    on gets zeros; one it depends on only through an index (argmax, sample),
    a host callback or an integer cast is an error."""
    loss = _check_loss(loss)
    params = _check_params(loss, params)
    program = loss.program
    # Where each op node exists, before any adjoint reads it.
    restrictions = needed_where(program)

    def where(v) -> Condition | None:
        r = restrictions.get(id(v))
        return r if isinstance(r, Condition) else None

    param_ids = {id(p) for p in params}

    consumers: dict[int, list[RecurrentTensor]] = defaultdict(list)
    for v in program.values:
        for op in operands_of(v):
            consumers[id(op.source)].append(v)

    # Nodes that reach the loss along differentiable reads, parameters as leaves.
    reaches = _closure([loss], lambda v: [] if id(v) in param_ids else _diff_sources(v))
    # ...and that the parameters reach.
    reached = _closure(
        [p for p in params if id(p) in reaches],
        lambda v: [c for c in consumers[id(v)] if id(c) in reaches and _diff_reads(c, v)],
    )
    active = [v for v in program.values if id(v) in reaches and id(v) in reached]
    for p in params:
        if id(p) not in reached:
            _explain_cut(loss, p, param_ids)

    adjoint = {
        id(v): program.recurrent(v.shape, v.dtype, v.domain, name=f"d_{_base_name(v)}")
        for v in active
    }
    parts: dict[int, list[TensorLike]] = defaultdict(list)
    parts[id(loss)].append(ops.constant(program, 1.0, (), loss.dtype))
    for node in active:
        if id(node) in param_ids:
            continue  # a leaf
        g = adjoint[id(node)]
        if isinstance(node.definition, CollectiveDef):
            operand = node.definition.operand
            parts[id(operand.source)].append(collective_vjp(node, g))
            continue
        # Window reads of an einsum transposed through its factors first: their
        # contributions are then never built.
        done = set()
        if rules.is_einsum(node):
            for pos, operand in enumerate(operands_of(node)):
                if id(operand.source) not in adjoint or operand.is_identity():
                    continue
                factors, keep = rules.einsum_factors(node, g, pos)
                spec = node.definition.attrs["ins"][pos]
                part = transpose_einsum(
                    factors, keep, spec, operand, node.domain, where(node), _what(node, operand)
                )
                if part is not None:
                    parts[id(operand.source)].append(part)
                    done.add(pos)
        for pos, contribution in _contributions(node, g, adjoint, done).items():
            operand = operands_of(node)[pos]
            part = transpose(
                contribution,
                operand,
                node.domain,
                where(node),
                where(operand.source),
                _what(node, operand),
            )
            parts[id(operand.source)].append(part)
    for v in active:
        terms = _over_ranks(v, parts[id(v)])
        total = terms[0] if terms else zeros(program, v.shape, v.dtype)
        for t in terms[1:]:
            total = total + t
        if where(v) is not None and any(d is None for d in v.shape):
            # Only v's own rule reads this, where v exists; there are no
            # zeros of a symbolic shape to give elsewhere.
            adjoint[id(v)][where(v)] = total
        else:
            adjoint[id(v)][...] = total
    out = []
    for p in params:
        if id(p) in adjoint:
            out.append(adjoint[id(p)])
        else:
            out.append(zeros(program, p.shape, p.dtype, p.domain))
    return out


def _over_ranks(v, terms: list) -> list:
    """The terms of v's adjoint, with those that are one rank's partial
    (over a worker dim v is not over: v is read on every rank) summed on
    the rank and then all-reduced, one collective per value."""
    mine = {d.name for d in v.domain}
    partial = [t for t in terms if any(d.worker and d.name not in mine for d in t.domain)]
    if not partial:
        return terms
    total = partial[0]
    for t in partial[1:]:
        total = total + t
    for d in total.domain:
        if d.worker and d.name not in mine:
            total = all_reduce(total, over=d)
    return [t for t in terms if not any(t is p for p in partial)] + [total]


def _what(node, operand) -> str:
    return f"the read of '{operand.source.name or 'a value'}' by {_describe(node)}"


def _contributions(node, g, adjoint, done=frozenset()) -> dict[int, TensorLike]:
    """Per operand position of `node` whose source is active (and not in
    `done`): its part of g."""
    wanted = {
        i for i, op in enumerate(operands_of(node)) if id(op.source) in adjoint and i not in done
    }
    d = node.definition
    if isinstance(d, CasesDef):
        # Case k holds where its condition does and no earlier one's.
        out = {}
        for k in wanted:
            cond = d.cases[k][0]
            part = node.program.recurrent(node.shape, node.dtype, node.domain)
            for earlier, _, _ in d.cases[:k]:
                part[earlier] = zeros(node.program, node.shape, node.dtype)
            part[cond if cond.constraints else ...] = g
            if cond.constraints:
                part[...] = zeros(node.program, node.shape, node.dtype)
            out[k] = part
        return out
    wanted &= rules.differentiable(node)
    return rules.vjp(node, g, wanted) if wanted else {}


def _diff_sources(v: RecurrentTensor) -> list[RecurrentTensor]:
    d = v.definition
    if isinstance(d, CasesDef):
        positions = range(len(d.cases))
    elif isinstance(d, OpDef):
        positions = rules.differentiable(v)
    elif isinstance(d, CollectiveDef) and differentiable_collective(d):
        positions = [0]
    else:
        positions = []
    ops_ = operands_of(v)
    return [ops_[i].source for i in positions if is_float(ops_[i].source.dtype)]


def _diff_reads(consumer: RecurrentTensor, source: RecurrentTensor) -> bool:
    return any(s is source for s in _diff_sources(consumer))


def _closure(start, step) -> set[int]:
    seen = {id(v) for v in start}
    stack = list(start)
    while stack:
        v = stack.pop()
        for w in step(v):
            if id(w) not in seen:
                seen.add(id(w))
                stack.append(w)
    return seen


def _explain_cut(loss, param, param_ids) -> None:
    """An error if the loss reads `param` only through non-differentiable
    reads; nothing if it does not read it at all (its gradient is zero)."""
    any_reads = _closure(
        [loss],
        lambda v: [] if id(v) in param_ids else [op.source for op in operands_of(v)],
    )
    if id(param) not in any_reads:
        return
    diff = _closure([loss], lambda v: [] if id(v) in param_ids else _diff_sources(v))
    # A node the gradient reaches that reads toward the parameter, but not differentiably.
    for v in loss.program.values:
        if id(v) not in diff or id(v) in param_ids:
            continue
        for op in operands_of(v):
            src = op.source
            if (
                id(src) in any_reads
                and not _diff_reads(v, src)
                and _leads_to(src, param, param_ids)
            ):
                reason = _reason(v, src)
                raise ProgramError(
                    f"the gradient of '{loss.name or 'the loss'}' with respect to "
                    f"'{param.name or 'the parameter'}' is cut at {_describe(v)}: {reason}",
                    loc=v.loc,
                    hint="compute the loss from differentiable values, e.g. the log-probability "
                    "of a sampled token from log_softmax(logits), not the token itself",
                )
    raise ProgramError(
        f"the gradient of '{loss.name or 'the loss'}' with respect to "
        f"'{param.name or 'the parameter'}' is cut: the loss reads it only through "
        "integer values or non-differentiable operators",
        loc=param.loc,
    )


def _leads_to(v, param, param_ids) -> bool:
    return id(param) in _closure(
        [v], lambda x: [] if id(x) in param_ids else [op.source for op in operands_of(x)]
    )


def _reason(node, src) -> str:
    d = node.definition
    if isinstance(d, UdfDef):
        return f"host callback '{d.callee}' has no derivative"
    if isinstance(d, CollectiveDef):
        what = f"{d.op} {d.reduction}" if d.reduction else d.op
        return (
            f"{what} over '{d.over.name}' has no derivative rule (all_reduce sum, "
            "broadcast and shift have one)"
        )
    if not is_float(src.dtype):
        why = ""
        if isinstance(src.definition, OpDef) and rules.differentiable(src) == set():
            why = f" ({rules.why_not(src)})"
        return f"it reads {_describe(src)}, whose {src.dtype} values carry no gradient{why}"
    return rules.why_not(node)


def _base_name(v: RecurrentTensor) -> str:
    d = v.definition
    if v.name:
        return v.name
    return (d.attrs.get("name") or d.op.name) if isinstance(d, OpDef) else "value"


def _describe(v: RecurrentTensor) -> str:
    d = v.definition
    if isinstance(d, OpDef):
        kind = d.attrs.get("name") or d.op.name
        return f"'{v.name}' ({kind})" if v.name else f"'{kind}'"
    if isinstance(d, UdfDef):
        return f"udf '{d.callee}'"
    if isinstance(d, CollectiveDef):
        return f"'{v.name}' ({d.op})" if v.name else f"'{d.op}'"
    return f"'{v.name or 'a value'}'"


def _check_loss(loss) -> RecurrentTensor:
    if not isinstance(loss, TensorLike):
        raise ProgramError(f"grad() needs a tensor loss, got {type(loss).__name__}")
    if not is_float(loss.dtype):
        raise ProgramError(f"grad() needs a float loss, got {loss.dtype}")
    if loss.shape:
        raise ProgramError(
            f"grad() needs a scalar loss per point, got shape {loss.shape}",
            hint="reduce it first, e.g. loss.sum() or loss.mean()",
        )
    if isinstance(loss, View):
        loss = ops.cast_to(loss, loss.dtype)
    return loss


def _check_params(loss, params) -> list[RecurrentTensor]:
    if isinstance(params, TensorLike):
        raise ProgramError("grad() takes a list of parameters", hint="write grad(loss, [w])")
    out = []
    for p in params:
        if not isinstance(p, RecurrentTensor) or p.program is not loss.program:
            raise ProgramError(
                "grad() parameters must be tensors of the loss's program (not views)",
                hint="pass the tensor itself, e.g. w rather than w[0]",
            )
        if not is_float(p.dtype):
            hint = "bf16 weights are for inference: train f32 weights" if p.dtype == "bf16" else ""
            raise ProgramError(
                f"cannot differentiate with respect to {p.dtype} '{p.name}'", hint=hint
            )
        out.append(p)
    return out
