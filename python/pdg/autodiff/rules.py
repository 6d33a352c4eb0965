"""Vector-Jacobian products of the frontend's operators, written with
frontend operators (so gradients are ordinary nodes that every pass
optimizes).

A rule gets the node, its operands as tensors read through their accesses
(`args`), the incoming gradient `g` (typed like the node's point) and the
operand positions whose gradient is wanted; it returns one contribution per
wanted position, typed like that operand's read. Only wanted contributions
are built: an unused one would be a node reading outside its domain.

An operator can bring its own rule in its attribute `vjp` (an imported
PyTorch module does, pdg.nn.from_torch): an object with `positions`, the
operand positions it differentiates, and `apply(node, args, g, wanted)`,
which returns the contributions as a rule here does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pdg.frontend import adjoint_ops as aops
from pdg.frontend import ops
from pdg.frontend.dtypes import is_float
from pdg.frontend.errors import ProgramError
from pdg.frontend.tensor import OpDef, Operand, RecurrentTensor, TensorLike, View

# ---------------------------------------------------------------------------
# Which operands a node is differentiable in
# ---------------------------------------------------------------------------

_NOT_DIFFERENTIABLE = {
    "argmax": "argmax and sample pick an index: they have no derivative",
    "floordiv": "floordiv is piecewise constant",
    "mod": "mod's derivative is not defined at its jumps",
    "astype": "a cast from an integer or boolean carries no gradient",
    "stop_gradient": "stop_gradient() reads its value as a constant",
}


def differentiable(node: RecurrentTensor) -> set[int]:
    """Positions of the operands a gradient flows into (float ones)."""
    d = node.definition
    name = _name(node)
    own = d.attrs.get("vjp")
    if own is not None:  # an operator that brings its own rule
        return {p for p in own.positions if is_float(d.operands[p].source.dtype)}
    if name not in _RULES:  # argmax, floordiv, mod, comparisons...
        return set()
    if name == "astype" and not is_float(d.operands[0].source.dtype):
        return set()
    positions = set(range(len(d.operands)))
    if name == "where":
        positions = {1, 2}
    elif name == "take":
        positions = {0}
    elif name in ("broadcast", "expand_to"):
        positions = {0}
    return {p for p in positions if is_float(d.operands[p].source.dtype)}


def why_not(node: RecurrentTensor) -> str:
    name = _name(node)
    if name in _NOT_DIFFERENTIABLE:
        return _NOT_DIFFERENTIABLE[name]
    reason = node.definition.attrs.get("no_derivative")  # an operator that says why itself
    if reason:
        return reason
    return f"'{name}' has no derivative rule"


def _name(node: RecurrentTensor) -> str:
    d = node.definition
    if d.op.name == "elementwise":
        return d.attrs["name"]
    return d.op.name


def vjp(node: RecurrentTensor, g: TensorLike, wanted: set[int]) -> dict[int, TensorLike]:
    d = node.definition
    args = [view_of(o) for o in d.operands]
    own = d.attrs.get("vjp")
    if own is not None:
        return own.apply(node, args, g, wanted)
    return _RULES[_name(node)](node, args, g, wanted)


def view_of(operand: Operand) -> TensorLike:
    """The operand as a tensor over the consumer's dims it mentions."""
    src = operand.source
    if operand.is_identity():
        return src
    names = set()
    for e in operand.entries:
        names |= e.names()
    domain = src.program.ordered_dims(names)
    return View(src, operand.entries, domain, operand.type)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def unbroadcast(g: TensorLike, like: TensorLike) -> TensorLike:
    """Sums g over the axes along which `like` was broadcast to g's shape."""
    lead = g.ndim - like.ndim
    if lead:
        g = ops.sum(g, axis=tuple(range(lead)))
    ones = tuple(a for a, d in enumerate(like.shape) if d == 1 and g.shape[a] != 1)
    if ones:
        g = ops.sum(g, axis=ones, keepdims=True)
    return g


def _values(node, args) -> list:
    """The elementwise operator's scalar operands: tensors and constants."""
    out = []
    for slot in node.definition.attrs["slots"]:
        out.append(args[slot[1]] if slot[0] == "arg" else slot[1])
    return out


def _elementwise_rule(node, args, g, wanted):
    """Each wanted operand gets g times its partial derivative, summed back
    over the axes it was broadcast along."""
    partial = _ELEMENTWISE[node.definition.attrs["name"]]
    values = _values(node, args)
    out = {}
    for pos, slot in enumerate(node.definition.attrs["slots"]):
        if slot[0] == "arg" and slot[1] in wanted:
            out[slot[1]] = unbroadcast(partial(values, node, g, pos), args[slot[1]])
    return out


def _gelu_partial(x, g):
    c, k = 0.7978845608028654, 0.044715
    th = ops.tanh((x + x * x * x * k) * c)
    inner = (1.0 - th * th) * ((x * x * (3.0 * k) + 1.0) * c)
    return g * ((th + 1.0) * 0.5 + x * inner * 0.5)


def _split_ties(win, tie, g):
    """g where `win`, half of it on ties (as PyTorch's maximum does)."""
    return ops.where(win, g, ops.where(tie, g * 0.5, 0.0))


def _extremum(v, g, i, better):
    a, b = v[i], v[1 - i]
    return _split_ties(better(a, b), ops.compare("eq", a, b), g)


# (values, y, g, i) -> g * d y / d values[i]; built only for wanted i.
_ELEMENTWISE = {
    "add": lambda v, y, g, i: g,
    "sub": lambda v, y, g, i: g if i == 0 else -g,
    "mul": lambda v, y, g, i: g * v[1 - i],
    "div": lambda v, y, g, i: g / v[1] if i == 0 else -(g * y) / v[1],
    "neg": lambda v, y, g, i: -g,
    "exp": lambda v, y, g, i: g * y,
    "log": lambda v, y, g, i: g / v[0],
    "log1p": lambda v, y, g, i: g / (v[0] + 1.0),
    "tanh": lambda v, y, g, i: g * (1.0 - y * y),
    "sqrt": lambda v, y, g, i: g * 0.5 / y,
    "rsqrt": lambda v, y, g, i: g * (-0.5) * y / v[0],
    "sin": lambda v, y, g, i: g * ops.cos(v[0]),
    "cos": lambda v, y, g, i: -(g * ops.sin(v[0])),
    "erf": lambda v, y, g, i: g * ops.exp(-(v[0] * v[0])) * (2.0 / math.sqrt(math.pi)),
    "abs": lambda v, y, g, i: ops.where(v[0] > 0.0, g, ops.where(v[0] < 0.0, -g, 0.0)),
    "sigmoid": lambda v, y, g, i: g * y * (1.0 - y),
    "relu": lambda v, y, g, i: ops.where(v[0] > 0.0, g, 0.0),
    "gelu": lambda v, y, g, i: _gelu_partial(v[0], g),
    "maximum": lambda v, y, g, i: _extremum(v, g, i, lambda a, b: a > b),
    "minimum": lambda v, y, g, i: _extremum(v, g, i, lambda a, b: a < b),
    "pow": lambda v, y, g, i: (
        g * v[1] * ops.power(v[0], v[1] - 1.0) if i == 0 else g * y * ops.log(v[0])
    ),
    "copy": lambda v, y, g, i: g,
    "astype": lambda v, y, g, i: g.astype(v[0].dtype),
    "where": lambda v, y, g, i: ops.where(v[0], g, 0.0) if i == 1 else ops.where(v[0], 0.0, g),
    "broadcast": lambda v, y, g, i: g,
}


# ---------------------------------------------------------------------------
# Reductions, contractions, softmax, gathers and shape operators
# ---------------------------------------------------------------------------


def _reduce(node, args, g, wanted):
    (x,) = args
    attrs = node.definition.attrs
    axes, kind = attrs["axes"], attrs["kind"]
    if kind == "prod":
        raise ProgramError("prod has no derivative rule")
    dynamic = any(x.shape[a] is None for a in axes)
    if attrs["mean"]:
        if dynamic:
            ones = aops.broadcast_like(ops.constant(x.program, 1.0, (), x.dtype), x)
            g = g / ops.sum(ones, axis=axes, keepdims=attrs["keepdims"])
        else:
            g = g * (1.0 / math.prod(x.shape[a] for a in axes))
    if kind == "sum":
        return {0: _expand(g, x, axes, attrs["keepdims"])}
    # max / min: the gradient is shared by the elements equal to the result
    hit = ops.compare("eq", x, _expand(node, x, axes, attrs["keepdims"])).astype(x.dtype)
    count = ops.sum(hit, axis=axes, keepdims=attrs["keepdims"])
    return {0: hit * _expand(g / count, x, axes, attrs["keepdims"])}


def _expand(g, x, axes, keepdims):
    if keepdims:
        return aops.broadcast_like(g, x)
    return aops.expand_to(g, x, axes)


def is_einsum(node) -> bool:
    return isinstance(node.definition, OpDef) and _name(node) == "einsum"


def einsum_factors(node, g, j, args=None) -> tuple[list[tuple[str, TensorLike]], str]:
    """The terms of einsum operand j's part of g: (spec, tensor) pairs (g
    first, then the other operands) and the letters of operand j they keep."""
    attrs = node.definition.attrs
    ins, out = attrs["ins"], attrs["out"]
    spec = ins[j]
    if len(set(spec)) != len(spec):
        raise ProgramError(f"einsum operand '{spec}' repeats an index: no derivative rule")
    args = args if args is not None else [view_of(o) for o in node.definition.operands]
    others = [(out, g)] + [(ins[i], args[i]) for i in range(len(args)) if i != j]
    have = set("".join(s for s, _ in others))
    return others, "".join(c for c in spec if c in have)


def _einsum(node, args, g, wanted):
    ins = node.definition.attrs["ins"]
    result = {}
    for j in wanted:
        spec = ins[j]
        others, keep = einsum_factors(node, g, j, args)
        part = _contraction(others, keep)
        if keep != spec:  # letters only this operand had: the sum is a broadcast
            axes = tuple(a for a, c in enumerate(spec) if c not in keep)
            part = aops.expand_to(part, args[j], axes)
        result[j] = part
    return result


def _contraction(terms: list[tuple[str, TensorLike]], out: str) -> TensorLike:
    """einsum of the (spec, tensor) terms into `out`. The gradient of x @ W
    for x is g @ W^T, a product whose output's last index is last in no
    operand; such a product is not register-tiled
    (pdg-register-tile-contractions wants it last in one) and compiles to
    strided gathers. So where an operand with that index is defined over
    fewer dims than the product (a weight, read at every step of a loop),
    it is read through a permuted copy with the index last: the copy is
    made once per point of its own domain (once per iteration), not per
    step."""
    last = out[-1] if out else None
    if last is not None and not any(spec.endswith(last) for spec, _ in terms):
        dims = {d.name for _, t in terms for d in t.domain}
        for k, (spec, t) in enumerate(terms):
            if last in spec and len(spec) == 2 and len(t.domain) < len(dims):
                terms = list(terms)
                terms[k] = (spec[::-1], ops.permute(t, (1, 0)))
                break
    specs = ",".join(spec for spec, _ in terms)
    return ops.einsum(f"{specs}->{out}", *[t for _, t in terms])


def _softmax(node, args, g, wanted):
    axis = node.definition.attrs["axis"]
    y = node
    return {0: y * (g - ops.sum(g * y, axis=axis, keepdims=True))}


def _take(node, args, g, wanted):
    table, idx = args
    axis = node.definition.attrs["axis"]
    if table.shape[axis] is None:
        raise ProgramError("the gradient of take() needs a table of static size")
    return {0: aops.index_add(g, idx, table.shape[axis], axis)}


def _concat(node, args, g, wanted):
    axis = node.definition.attrs["axis"]
    out, start = {}, 0
    for i, x in enumerate(args):
        size = x.shape[axis]
        if size is None:
            raise ProgramError("the gradient of concat() needs operands of static size")
        if i in wanted:
            out[i] = aops.slice_axis(g, axis, start, size)
        start += size
    return out


def _reshape(node, args, g, wanted):
    return {0: ops.reshape(g, args[0].shape)}


def _permute(node, args, g, wanted):
    perm = node.definition.attrs["perm"]
    inverse = [perm.index(a) for a in range(len(perm))]
    return {0: ops.permute(g, inverse)}


def _expand_to_rule(node, args, g, wanted):
    return {0: ops.sum(g, axis=node.definition.attrs["axes"])}


_RULES: dict[str, Callable] = {name: _elementwise_rule for name in _ELEMENTWISE}
_RULES.update(
    {
        "reduce": _reduce,
        "einsum": _einsum,
        "softmax": _softmax,
        "take": _take,
        "concat": _concat,
        "reshape": _reshape,
        "permute": _permute,
        "expand_to": _expand_to_rule,
    }
)
