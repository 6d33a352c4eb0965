"""The frontend's operators. Each creates a recurrent tensor whose domain is
the union of its operands' domains and whose node body computes one point
with upstream ops. Elementwise ops broadcast like NumPy.

Every operator is an `OpSpec`: a name and an `emit` function that writes the
body given the block arguments (one per tensor operand, with the accessed
type) — the one table that the emitter and autodiff will share.
"""

from __future__ import annotations

import builtins
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .body import Body, Val, scalar_type
from .dtypes import (
    TensorType,
    canonical_dtype,
    float_width,
    is_float,
    is_int,
    is_storage_float,
)
from .errors import ProgramError
from .tensor import OpDef, RecurrentTensor, TensorLike


@dataclass(frozen=True)
class OpSpec:
    name: str
    # emit(body, args, result_type, attrs) -> Val
    emit: Callable


def _program(values):
    for v in values:
        if isinstance(v, TensorLike):
            return v.program
    raise ProgramError("an operator needs at least one tensor operand")


def _make(spec: OpSpec, operands: Sequence[TensorLike], type_: TensorType, **attrs):
    program = _program(operands)
    for o in operands:
        if o.program is not program:
            raise ProgramError("operands belong to different programs")
    names = set()
    for o in operands:
        names |= {d.name for d in o.domain}
    domain = program.ordered_dims(names)
    definition = OpDef(spec, [o.operand() for o in operands], attrs)
    return RecurrentTensor(program, domain, type_, definition)


def as_tensor(value, program, like: TensorLike | None = None) -> TensorLike:
    """A tensor from a tensor, or a constant node from a Python scalar."""
    if isinstance(value, TensorLike):
        return value
    if isinstance(value, (bool, int, float)):
        dtype = like.dtype if like is not None else _scalar_dtype(value)
        return constant(program, value, (), dtype)
    raise ProgramError(f"expected a tensor or a number, got {type(value).__name__}")


def _scalar_dtype(value) -> str:
    if isinstance(value, bool):
        return "bool"
    return "i64" if isinstance(value, int) else "f32"


# ---------------------------------------------------------------------------
# Constants and coordinates
# ---------------------------------------------------------------------------


def _emit_constant(body: Body, args, type_: TensorType, attrs) -> Val:
    return body.const_tensor(attrs["value"], type_)


CONSTANT = OpSpec("constant", _emit_constant)


def constant(program, value, shape=(), dtype="f32") -> RecurrentTensor:
    """A tensor filled with `value`, over the empty domain."""
    type_ = TensorType(tuple(shape), canonical_dtype(dtype))
    if any(d is None for d in type_.shape):
        raise ProgramError("a constant needs a static shape")
    return RecurrentTensor(program, (), type_, OpDef(CONSTANT, [], {"value": value}))


def _dense_literal(values, dtype: str) -> str:
    import numpy as np

    from .body import float_literal

    arr = np.asarray(values)

    def lit(v) -> str:
        if dtype == "bool":
            return "true" if bool(v) else "false"
        if is_float(dtype):
            return float_literal(float(v), dtype)
        return str(int(v))

    def nested(a) -> str:
        if a.ndim == 0:
            return lit(a.item())
        return "[" + ", ".join(nested(x) for x in a) + "]"

    return nested(arr)


def _emit_constant_array(body: Body, args, type_: TensorType, attrs) -> Val:
    return body.emit(f"arith.constant dense<{attrs['literal']}> : {type_.mlir()}", type_)


CONSTANT_ARRAY = OpSpec("constant_array", _emit_constant_array)


def constant_array(program, values, dtype=None) -> RecurrentTensor:
    """A tensor holding the given array (a NumPy array or nested lists)."""
    import numpy as np

    arr = np.asarray(values)
    dt = canonical_dtype(dtype if dtype is not None else arr.dtype)
    type_ = TensorType(tuple(int(d) for d in arr.shape), dt)
    return RecurrentTensor(
        program, (), type_, OpDef(CONSTANT_ARRAY, [], {"literal": _dense_literal(arr, dt)})
    )


def _emit_coordinate(body: Body, args, type_: TensorType, attrs) -> Val:
    p = body.emit(f"pdg.point @{attrs['dim']} : index", "index")
    i = body.emit(f"arith.index_cast {p.name} : index to i64", "i64")
    return body.emit(f"tensor.from_elements {i.name} : {type_.mlir()}", type_)


COORDINATE = OpSpec("coordinate", _emit_coordinate)


def coordinate(dim, domain=None) -> RecurrentTensor:
    """The current coordinate along `dim`, as an i64 scalar over [dim], or
    over `domain` (dims that include `dim`): one per sequence, for a dim
    that ends per sequence inside a loop over other dims."""
    program = dim.program
    dims = (dim,)
    if domain is not None:
        dims = program.checked_domain(domain)
        if all(d is not dim for d in dims):
            raise ProgramError(f"coordinate(): the domain must include '{dim.name}'")
    return RecurrentTensor(
        program, dims, TensorType((), "i64"), OpDef(COORDINATE, [], {"dim": dim.name})
    )


# ---------------------------------------------------------------------------
# Elementwise operators (NumPy broadcasting)
# ---------------------------------------------------------------------------


def broadcast_shapes(shapes: Sequence[tuple]) -> tuple:
    rank = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        size = 1
        for s in shapes:
            i = axis - (rank - len(s))
            if i < 0:
                continue
            d = s[i]
            if d == 1:
                continue
            if size == 1 or size is None:
                size = d if size == 1 or d is not None else size
            elif d is not None and d != size:
                raise ProgramError(f"shapes {' and '.join(map(str, shapes))} do not broadcast")
        out.append(size)
    return tuple(out)


def _dynamic_sizes(body: Body, args: Sequence[Val], out: TensorType) -> list[Val]:
    """Index values for the `?` dims of `out`, taken from an argument that
    has a `?` at the same (right-aligned) axis."""
    sizes = []
    for axis, d in enumerate(out.shape):
        if d is not None:
            continue
        for a in args:
            i = axis - (out.rank - a.tensor.rank)
            if i >= 0 and a.tensor.shape[i] is None:
                sizes.append(body.dim_size(a, i))
                break
        else:
            raise ProgramError(f"cannot size dim {axis} of {out.mlir()}")
    return sizes


def _broadcast_map(arg: TensorType, out: TensorType) -> str:
    offset = out.rank - arg.rank
    results = []
    for i, d in enumerate(arg.shape):
        o = out.shape[i + offset]
        results.append("0" if d == 1 and o != 1 else f"d{i + offset}")
    return ", ".join(results)


# A scalar function: (region body, scalar args, their dtypes) -> scalar Val.
ScalarFn = Callable[[Body, list, list], Val]


def _emit_elementwise(body: Body, args, type_: TensorType, attrs) -> Val:
    fn: ScalarFn = attrs["fn"]
    slots = attrs["slots"]  # per operand: ("arg", index) or ("const", value, dtype)
    arg_vals = list(args)
    sizes = _dynamic_sizes(body, arg_vals, type_)
    init = body.empty(type_, sizes)
    inputs = [(a, _broadcast_map(a.tensor, type_)) for a in arg_vals]
    dtypes = [a.tensor.dtype for a in arg_vals]

    def region(r: Body, ins, outs):
        scalars, kinds = [], []
        for slot in slots:
            if slot[0] == "arg":
                scalars.append(ins[slot[1]])
                kinds.append(dtypes[slot[1]])
            else:
                scalars.append(r.const_scalar(slot[1], slot[2]))
                kinds.append(slot[2])
        return [fn(r, scalars, kinds)]

    iterators = ["parallel"] * type_.rank
    return body.generic(
        inputs, [(init, ", ".join(f"d{i}" for i in range(type_.rank)))], iterators, region
    )[0]


ELEMENTWISE = OpSpec("elementwise", _emit_elementwise)


def elementwise(
    name: str,
    values: Sequence,
    out_dtype: str | None,
    fn: ScalarFn,
    dtype_check: Callable[[str], bool] | None = None,
) -> RecurrentTensor:
    """Applies a scalar function pointwise, broadcasting the operands.
    Python numbers take the dtype of the tensor operands."""
    tensors = [v for v in values if isinstance(v, TensorLike)]
    if not tensors:
        raise ProgramError(f"{name} needs at least one tensor operand")
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise ProgramError(
            f"{name} of tensors with different dtypes {sorted(dtypes)}",
            hint="cast one of them with .astype(...)",
        )
    dtype = dtypes.pop()
    if is_storage_float(dtype) and name not in ("astype", "copy"):
        raise ProgramError(
            f"{name} of bf16 tensors: bf16 holds weights, it is not computed in",
            hint="widen with .astype('f32') first (products with @ widen it themselves)",
        )
    if dtype_check is not None and not dtype_check(dtype):
        raise ProgramError(f"{name} is not defined for {dtype} tensors")
    slots, index = [], 0
    for v in values:
        if isinstance(v, TensorLike):
            slots.append(("arg", index))
            index += 1
        elif isinstance(v, (bool, int, float)):
            if is_int(dtype) and isinstance(v, float) and not float(v).is_integer():
                raise ProgramError(f"{name}: {v} is not an integer, but the tensor is {dtype}")
            slots.append(("const", v, dtype))
        else:
            raise ProgramError(f"{name}: unsupported operand {type(v).__name__}")
    shape = broadcast_shapes([t.shape for t in tensors])
    type_ = TensorType(shape, out_dtype or dtype)
    return _make(ELEMENTWISE, tensors, type_, fn=fn, slots=tuple(slots), name=name)


def _binary(fop: str, iop: str | None):
    def fn(r: Body, s, kinds):
        a, b = s
        op = fop if is_float(kinds[0]) else iop
        if op is None:
            raise ProgramError(f"operation not defined for {kinds[0]}")
        return r.emit(f"{op} {a.name}, {b.name} : {a.type}", a.type)

    return fn


def _unary_math(op: str):
    def fn(r: Body, s, kinds):
        return r.emit(f"{op} {s[0].name} : {s[0].type}", s[0].type)

    return fn


def add(a, b):
    return elementwise("add", [a, b], None, _binary("arith.addf", "arith.addi"))


def sub(a, b):
    return elementwise("sub", [a, b], None, _binary("arith.subf", "arith.subi"))


def mul(a, b):
    return elementwise("mul", [a, b], None, _binary("arith.mulf", "arith.muli"))


def div(a, b):
    return elementwise("div", [a, b], None, _binary("arith.divf", "arith.divsi"))


def floordiv(a, b):
    return elementwise("floordiv", [a, b], None, _binary("arith.divf", "arith.floordivsi"))


def mod(a, b):
    return elementwise("mod", [a, b], None, _binary("arith.remf", "arith.remsi"))


def maximum(a, b):
    return elementwise("maximum", [a, b], None, _binary("arith.maximumf", "arith.maxsi"))


def minimum(a, b):
    return elementwise("minimum", [a, b], None, _binary("arith.minimumf", "arith.minsi"))


def power(a, b):
    return elementwise("pow", [a, b], None, _binary("math.powf", None), is_float)


def neg(a):
    def fn(r: Body, s, kinds):
        if is_float(kinds[0]):
            return r.emit(f"arith.negf {s[0].name} : {s[0].type}", s[0].type)
        zero = r.const_scalar(0, kinds[0])
        return r.emit(f"arith.subi {zero.name}, {s[0].name} : {s[0].type}", s[0].type)

    return elementwise("neg", [a], None, fn)


def _float_unary(name: str, op: str):
    def apply(a):
        return elementwise(name, [a], None, _unary_math(op), is_float)

    apply.__name__ = name
    apply.__doc__ = f"Elementwise {op}."
    return apply


exp = _float_unary("exp", "math.exp")
log = _float_unary("log", "math.log")
log1p = _float_unary("log1p", "math.log1p")
tanh = _float_unary("tanh", "math.tanh")
sqrt = _float_unary("sqrt", "math.sqrt")
rsqrt = _float_unary("rsqrt", "math.rsqrt")
sin = _float_unary("sin", "math.sin")
cos = _float_unary("cos", "math.cos")
erf = _float_unary("erf", "math.erf")


def abs(a):  # noqa: A001
    def fn(r: Body, s, kinds):
        op = "math.absf" if is_float(kinds[0]) else "math.absi"
        return r.emit(f"{op} {s[0].name} : {s[0].type}", s[0].type)

    return elementwise("abs", [a], None, fn)


def sigmoid(a):
    def fn(r: Body, s, kinds):
        x = s[0]
        one = r.const_scalar(1.0, kinds[0])
        n = r.emit(f"arith.negf {x.name} : {x.type}", x.type)
        e = r.emit(f"math.exp {n.name} : {x.type}", x.type)
        d = r.emit(f"arith.addf {one.name}, {e.name} : {x.type}", x.type)
        return r.emit(f"arith.divf {one.name}, {d.name} : {x.type}", x.type)

    return elementwise("sigmoid", [a], None, fn, is_float)


def relu(a):
    def fn(r: Body, s, kinds):
        zero = r.const_scalar(0, kinds[0])
        op = "arith.maximumf" if is_float(kinds[0]) else "arith.maxsi"
        return r.emit(f"{op} {s[0].name}, {zero.name} : {s[0].type}", s[0].type)

    return elementwise("relu", [a], None, fn)


def gelu(a):
    """GELU, tanh approximation (GPT-2's): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def fn(r: Body, s, kinds):
        x, t = s[0], s[0].type
        c = r.const_scalar(0.7978845608028654, kinds[0])
        k = r.const_scalar(0.044715, kinds[0])
        half = r.const_scalar(0.5, kinds[0])
        one = r.const_scalar(1.0, kinds[0])
        x2 = r.emit(f"arith.mulf {x.name}, {x.name} : {t}", t)
        x3 = r.emit(f"arith.mulf {x2.name}, {x.name} : {t}", t)
        kx3 = r.emit(f"arith.mulf {k.name}, {x3.name} : {t}", t)
        inner = r.emit(f"arith.addf {x.name}, {kx3.name} : {t}", t)
        scaled = r.emit(f"arith.mulf {c.name}, {inner.name} : {t}", t)
        th = r.emit(f"math.tanh {scaled.name} : {t}", t)
        onep = r.emit(f"arith.addf {one.name}, {th.name} : {t}", t)
        hx = r.emit(f"arith.mulf {half.name}, {x.name} : {t}", t)
        return r.emit(f"arith.mulf {hx.name}, {onep.name} : {t}", t)

    return elementwise("gelu", [a], None, fn, is_float)


def silu(a):
    return mul(a, sigmoid(a))


_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_CMPI = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}


def compare(kind: str, a, b):
    def fn(r: Body, s, kinds):
        x, y = s
        if is_float(kinds[0]):
            return r.emit(f"arith.cmpf {_CMPF[kind]}, {x.name}, {y.name} : {x.type}", "i1")
        return r.emit(f"arith.cmpi {_CMPI[kind]}, {x.name}, {y.name} : {x.type}", "i1")

    return elementwise(kind, [a, b], "bool", fn)


def logical(kind: str, *values):
    op = {"and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}[kind]

    def fn(r: Body, s, kinds):
        return r.emit(f"{op} {s[0].name}, {s[1].name} : i1", "i1")

    return elementwise(f"logical_{kind}", list(values), "bool", fn, lambda d: d == "bool")


def logical_not(a):
    def fn(r: Body, s, kinds):
        t = r.const_scalar(True, "bool")
        return r.emit(f"arith.xori {s[0].name}, {t.name} : i1", "i1")

    return elementwise("logical_not", [a], "bool", fn, lambda d: d == "bool")


def stop_gradient(a):
    """`a` itself, read by pdg.autodiff.grad as a constant: no gradient flows back
    through it (the sampling policy's log-probs in a policy-gradient ratio,
    whose value is the policy's own)."""
    return elementwise("stop_gradient", [a], None, lambda r, s, kinds: s[0])


def where(cond, a, b):
    """`a` where `cond` is true, else `b` (broadcast)."""
    if not isinstance(cond, TensorLike) or cond.dtype != "bool":
        raise ProgramError("where() needs a boolean tensor condition")
    values = [a, b]
    tensors = [v for v in values if isinstance(v, TensorLike)]
    if not tensors:
        raise ProgramError("where() needs at least one tensor among its two values")
    dtype = tensors[0].dtype
    if any(t.dtype != dtype for t in tensors):
        raise ProgramError("where() values have different dtypes", hint="cast with .astype")
    program = cond.program
    a = as_tensor(a, program, like=tensors[0])
    b = as_tensor(b, program, like=tensors[0])
    shape = broadcast_shapes([cond.shape, a.shape, b.shape])

    def fn(r: Body, s, kinds):
        c, x, y = s
        return r.emit(f"arith.select {c.name}, {x.name}, {y.name} : {x.type}", x.type)

    type_ = TensorType(shape, dtype)
    return _make(
        ELEMENTWISE,
        [cond, a, b],
        type_,
        fn=fn,
        slots=(("arg", 0), ("arg", 1), ("arg", 2)),
        name="where",
    )


def _any_float(dtype: str) -> bool:
    return is_float(dtype) or is_storage_float(dtype)


def cast_to(a: TensorLike, dtype) -> RecurrentTensor:
    dtype = canonical_dtype(dtype)
    src = a.dtype
    if src == dtype:
        return elementwise("copy", [a], None, lambda r, s, k: s[0])

    bf16_pair = (src, dtype) if is_storage_float(src) else (dtype, src)
    if is_storage_float(bf16_pair[0]) and not is_float(bf16_pair[1]):
        raise ProgramError(
            f"cannot cast {src} to {dtype}", hint="bf16 converts to and from f32 or f64 only"
        )

    def fn(r: Body, s, kinds):
        x, to = s[0], scalar_type(dtype)
        if _any_float(src) and _any_float(dtype):
            op = "arith.extf" if float_width(dtype) > float_width(src) else "arith.truncf"
        elif is_float(dtype):
            op = "arith.uitofp" if src == "bool" else "arith.sitofp"
        elif dtype == "bool":
            zero = r.const_scalar(0, src)
            if is_float(src):
                return r.emit(f"arith.cmpf une, {x.name}, {zero.name} : {x.type}", "i1")
            return r.emit(f"arith.cmpi ne, {x.name}, {zero.name} : {x.type}", "i1")
        elif is_float(src):
            op = "arith.fptosi"
        elif src == "bool":
            op = "arith.extui"
        else:
            op = "arith.extsi" if dtype == "i64" else "arith.trunci"
        return r.emit(f"{op} {x.name} : {x.type} to {to}", to)

    return elementwise("astype", [a], dtype, fn)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

_REDUCE = {
    # kind: (float op, int op, float init, int init)
    "sum": ("arith.addf", "arith.addi", 0.0, 0),
    "max": ("arith.maximumf", "arith.maxsi", float("-inf"), -(2**63)),
    "min": ("arith.minimumf", "arith.minsi", float("inf"), 2**63 - 1),
    "prod": ("arith.mulf", "arith.muli", 1.0, 1),
}


def _axes(axis, rank: int) -> tuple:
    if axis is None:
        return tuple(range(rank))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        if not isinstance(a, int) or not -rank <= a < rank:
            raise ProgramError(f"axis {a} is out of range for a rank-{rank} tensor")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ProgramError(f"axis {axis} repeats an axis")
    return tuple(sorted(out))


def _emit_reduce(body: Body, args, type_: TensorType, attrs) -> Val:
    (x,) = args
    kind, axes = attrs["kind"], attrs["axes"]
    fop, iop, finit, iinit = _REDUCE[kind]
    is_f = is_float(x.tensor.dtype)
    kept = [i for i in range(x.tensor.rank) if i not in axes]
    sizes = [body.dim_size(x, i) for i in kept if x.tensor.shape[i] is None]
    out_type = TensorType(tuple(x.tensor.shape[i] for i in kept), x.tensor.dtype)
    init = body.filled(out_type, sizes, finit if is_f else iinit)
    iterators = ["reduction" if i in axes else "parallel" for i in range(x.tensor.rank)]
    op = fop if is_f else iop

    def region(r: Body, ins, outs):
        return [r.emit(f"{op} {ins[0].name}, {outs[0].name} : {ins[0].type}", ins[0].type)]

    all_dims = ", ".join(f"d{i}" for i in range(x.tensor.rank))
    kept_dims = ", ".join(f"d{i}" for i in kept)
    (r,) = body.generic([(x, all_dims)], [(init, kept_dims)], iterators, region)
    if attrs["mean"]:
        count = body.const_index(1)
        for i in axes:
            size = (
                body.dim_size(x, i)
                if x.tensor.shape[i] is None
                else body.const_index(x.tensor.shape[i])
            )
            count = body.emit(f"arith.muli {count.name}, {size.name} : index", "index")
        ci = body.emit(f"arith.index_cast {count.name} : index to i64", "i64")
        elem = scalar_type(x.tensor.dtype)
        cf = body.emit(f"arith.sitofp {ci.name} : i64 to {elem}", elem)

        def divide(rr: Body, ins, outs):
            return [rr.emit(f"arith.divf {ins[0].name}, {cf.name} : {elem}", elem)]

        out_sizes = [body.dim_size(r, i) for i, d in enumerate(out_type.shape) if d is None]
        init2 = body.empty(out_type, out_sizes)
        (r,) = body.generic(
            [(r, kept_dims_pos(out_type))],
            [(init2, kept_dims_pos(out_type))],
            ["parallel"] * out_type.rank,
            divide,
        )
    if attrs["keepdims"]:
        r = _expand_reduced(body, r, x.tensor, axes, type_)
    return r


def kept_dims_pos(t: TensorType) -> str:
    return ", ".join(f"d{i}" for i in range(t.rank))


def _expand_reduced(body: Body, r: Val, src: TensorType, axes, type_: TensorType) -> Val:
    """tensor.expand_shape re-inserting size-1 dims at the reduced axes."""
    groups, current = [], []
    out_index = 0
    for i in range(src.rank):
        current.append(i)
        if i not in axes:
            groups.append(current)
            current = []
            out_index += 1
    if current:
        if groups:
            groups[-1].extend(current)
        else:
            groups.append(current)
    if r.tensor.rank == 0:
        groups = []
    reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    sizes = []
    for i, d in enumerate(type_.shape):
        if d is None:
            sizes.append(
                body.dim_size(r, [j for j in range(src.rank) if j not in axes].index(i)).name
            )
        else:
            sizes.append(str(d))
    return body.emit(
        f"tensor.expand_shape {r.name} {reassoc} output_shape [{', '.join(sizes)}] : "
        f"{r.tensor.mlir()} into {type_.mlir()}",
        type_,
    )


REDUCE = OpSpec("reduce", _emit_reduce)


def reduce(kind: str, x: TensorLike, axis=None, keepdims: bool = False, mean: bool = False):
    if mean and not is_float(x.dtype):
        raise ProgramError("mean() needs a float tensor", hint="cast with .astype('f32')")
    if is_storage_float(x.dtype):
        raise ProgramError(
            f"{kind} of a bf16 tensor: bf16 holds weights, it is not computed in",
            hint="widen with .astype('f32') first",
        )
    axes = _axes(axis, x.ndim)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return _make(
        REDUCE, [x], TensorType(shape, x.dtype), kind=kind, axes=axes, keepdims=keepdims, mean=mean
    )


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return reduce("sum", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return reduce("sum", x, axis, keepdims, mean=True)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return reduce("min", x, axis, keepdims)


# ---------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------


def _parse_einsum(spec: str, count: int):
    if "->" not in spec:
        raise ProgramError(f"einsum spec '{spec}' needs an explicit '->' output")
    lhs, out = spec.replace(" ", "").split("->")
    ins = lhs.split(",")
    if len(ins) != count:
        raise ProgramError(f"einsum spec '{spec}' names {len(ins)} operands, got {count}")
    return ins, out


def _emit_einsum(body: Body, args, type_: TensorType, attrs) -> Val:
    ins, out = attrs["ins"], attrs["out"]
    letters = attrs["letters"]
    pos = {c: i for i, c in enumerate(letters)}
    sizes = []
    for c, d in zip(out, type_.shape, strict=True):
        if d is None:
            for a, spec in zip(args, ins, strict=True):
                if c in spec and a.tensor.shape[spec.index(c)] is None:
                    sizes.append(body.dim_size(a, spec.index(c)))
                    break
    init = body.filled(type_, sizes, 0.0 if is_float(type_.dtype) else 0)
    iterators = ["parallel" if c in out else "reduction" for c in letters]
    float_ = is_float(type_.dtype)

    def region(r: Body, in_args, outs):
        # bf16 operands (weights) are widened: products and sums in f32.
        in_args = [
            r.emit(f"arith.extf {a.name} : {a.type} to {scalar_type(type_.dtype)}", "f32")
            if is_storage_float(x.tensor.dtype)
            else a
            for a, x in zip(in_args, args, strict=True)
        ]
        prod = in_args[0]
        for other in in_args[1:]:
            op = "arith.mulf" if float_ else "arith.muli"
            prod = r.emit(f"{op} {prod.name}, {other.name} : {prod.type}", prod.type)
        op = "arith.addf" if float_ else "arith.addi"
        return [r.emit(f"{op} {prod.name}, {outs[0].name} : {prod.type}", prod.type)]

    inputs = [(a, ", ".join(f"d{pos[c]}" for c in spec)) for a, spec in zip(args, ins, strict=True)]
    return body.generic(inputs, [(init, ", ".join(f"d{pos[c]}" for c in out))], iterators, region)[
        0
    ]


EINSUM = OpSpec("einsum", _emit_einsum)


def einsum(spec: str, *xs: TensorLike) -> RecurrentTensor:
    """Contraction in Einstein notation, e.g. einsum('ij,jk->ik', a, b)."""
    ins, out = _parse_einsum(spec, len(xs))
    sizes: dict = {}
    dtypes = {x.dtype for x in xs}
    if dtypes == {"bf16"} or dtypes == {"f32", "bf16"}:
        # Weights stored in bf16: the product reads them widened to f32 and
        # accumulates in f32, so its result is f32.
        dtypes = {"f32"}
    if len(dtypes) != 1:
        raise ProgramError(
            f"einsum operands have different dtypes {sorted(dtypes)}",
            hint="cast one with .astype(); bf16 operands mix with f32 only",
        )
    for x, s in zip(xs, ins, strict=True):
        if len(s) != x.ndim:
            raise ProgramError(
                f"einsum operand '{s}' has rank {len(s)} but the tensor has {x.ndim}"
            )
        for c, d in zip(s, x.shape, strict=True):
            prev = sizes.get(c, "unset")
            if prev == "unset" or prev is None:
                sizes[c] = d
            elif d is not None and d != prev:
                raise ProgramError(f"einsum index '{c}' has sizes {prev} and {d}")
    if any(c not in sizes for c in out):
        raise ProgramError(f"einsum output '{out}' uses an index no operand has")
    letters = "".join(dict.fromkeys(out + "".join(ins)))
    type_ = TensorType(tuple(sizes[c] for c in out), dtypes.pop())
    return _make(EINSUM, list(xs), type_, ins=tuple(ins), out=out, letters=letters)


def matmul(a: TensorLike, b: TensorLike) -> RecurrentTensor:
    """NumPy's matmul for ranks 1 and 2 (and batched with equal batch dims)."""
    if a.ndim == 0 or b.ndim == 0:
        raise ProgramError("matmul needs tensors of rank >= 1", hint="use * for scalars")
    letters = iter(string.ascii_lowercase)
    k = next(letters)
    batch = "".join(next(letters) for _ in range(builtins.max(a.ndim, b.ndim) - 2))
    m, n = next(letters), next(letters)
    sa = (batch[len(batch) - (a.ndim - 2) :] if a.ndim > 2 else "") + (m if a.ndim > 1 else "") + k
    sb = (batch[len(batch) - (b.ndim - 2) :] if b.ndim > 2 else "") + k + (n if b.ndim > 1 else "")
    out = batch + (m if a.ndim > 1 else "") + (n if b.ndim > 1 else "")
    return einsum(f"{sa},{sb}->{out}", a, b)


# ---------------------------------------------------------------------------
# Softmax, argmax, sampling
# ---------------------------------------------------------------------------


def _emit_softmax(body: Body, args, type_: TensorType, attrs) -> Val:
    (x,) = args
    sizes = [body.dim_size(x, i) for i, d in enumerate(type_.shape) if d is None]
    init = body.empty(type_, sizes)
    return body.emit(
        f"linalg.softmax dimension({attrs['axis']}) ins({x.name} : {type_.mlir()}) "
        f"outs({init.name} : {type_.mlir()}) -> {type_.mlir()}",
        type_,
    )


SOFTMAX = OpSpec("softmax", _emit_softmax)


def softmax(x: TensorLike, axis: int = -1) -> RecurrentTensor:
    if not is_float(x.dtype):
        raise ProgramError("softmax needs a float tensor")
    (ax,) = _axes(axis, x.ndim)
    return _make(SOFTMAX, [x], x.type, axis=ax)


def log_softmax(x: TensorLike, axis: int = -1) -> RecurrentTensor:
    """x - max - log(sum(exp(x - max))), stable."""
    m = max(x, axis, keepdims=True)
    shifted = sub(x, m)
    return sub(shifted, log(sum(exp(shifted), axis, keepdims=True)))


def _emit_argmax(body: Body, args, type_: TensorType, attrs) -> Val:
    x = args[0]
    axis = attrs["axis"]
    noise = attrs.get("noise")
    rank = x.tensor.rank
    kept = [i for i in range(rank) if i != axis]
    sizes = [body.dim_size(x, i) for i in kept if x.tensor.shape[i] is None]
    elem = scalar_type(x.tensor.dtype)
    val_type = TensorType(type_.shape, x.tensor.dtype)
    best = body.filled(val_type, sizes, float("-inf") if is_float(x.tensor.dtype) else -(2**63))
    index = body.filled(type_, sizes, 0)
    coords = []
    if noise is not None:
        # A dim named in `at` hashes the given coordinate (its value, read
        # once per point, after the seed if the seed is a value). The others
        # are {pdg.global}: the point's coordinates in the whole program,
        # also where a dim is split over ranks (pdg-split-over-workers), so
        # every split draws the same samples.
        named = noise.get("at", ())
        given = dict(zip(named, args[len(args) - len(named) :], strict=True))
        coords = []
        for d in noise["dims"]:
            if d in given:
                value = given[d]
                v = body.emit(f"tensor.extract {value.name}[] : {value.tensor.mlir()}", "i64")
                coords.append(body.emit(f"arith.index_cast {v.name} : i64 to index", "index"))
            else:
                coords.append(body.emit(f"pdg.point @{d} {{pdg.global}} : index", "index"))
        if noise["seed"] is None:  # the seed is a program value, read once per point
            seed = args[1]
            noise = {
                **noise,
                "seed": body.emit(f"tensor.extract {seed.name}[] : {seed.tensor.mlir()}", "i64"),
            }
    is_f = is_float(x.tensor.dtype)

    def region(r: Body, ins, outs):
        v = ins[0]
        idx = r.emit(f"linalg.index {axis} : index", "index")
        i64 = r.emit(f"arith.index_cast {idx.name} : index to i64", "i64")
        if noise is not None:
            # The other axes' indices join the hash: each row of a batch of
            # logits draws on its own (a rank-1 point hashes as before).
            rows = [r.emit(f"linalg.index {k} : index", "index") for k in kept]
            v = _gumbel_perturb(r, v, i64, coords + rows, noise, elem)
        pred = (
            f"arith.cmpf ogt, {v.name}, {outs[0].name} : {elem}"
            if is_f
            else f"arith.cmpi sgt, {v.name}, {outs[0].name} : {elem}"
        )
        gt = r.emit(pred, "i1")
        nv = r.emit(f"arith.select {gt.name}, {v.name}, {outs[0].name} : {elem}", elem)
        ni = r.emit(f"arith.select {gt.name}, {i64.name}, {outs[1].name} : i64", "i64")
        return [nv, ni]

    all_dims = ", ".join(f"d{i}" for i in range(rank))
    kept_dims = ", ".join(f"d{i}" for i in kept)
    iterators = ["reduction" if i == axis else "parallel" for i in range(rank)]
    _, idx = body.generic(
        [(x, all_dims)], [(best, kept_dims), (index, kept_dims)], iterators, region
    )
    return idx


ARGMAX = OpSpec("argmax", _emit_argmax)


def argmax(x: TensorLike, axis: int = -1) -> RecurrentTensor:
    """Index of the largest element along `axis` (the first one on ties), i64."""
    (ax,) = _axes(axis, x.ndim)
    shape = tuple(d for i, d in enumerate(x.shape) if i != ax)
    return _make(ARGMAX, [x], TensorType(shape, "i64"), axis=ax)


# splitmix64 constants: a counter-based generator, so that a sample depends
# only on (seed, coordinates, index) and every backend draws the same one.
_GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as i64
_MIX1 = -4658895280553007687  # 0xBF58476D1CE4E5B9
_MIX2 = -7723592293110705685  # 0x94D049BB133111EB


def _splitmix(r: Body, x: Val) -> Val:
    def c(v):
        return r.const_scalar(v, "i64")

    def shr(v: Val, n: int) -> Val:
        return r.emit(f"arith.shrui {v.name}, {c(n).name} : i64", "i64")

    def xor(a: Val, b: Val) -> Val:
        return r.emit(f"arith.xori {a.name}, {b.name} : i64", "i64")

    def mul_(a: Val, k: int) -> Val:
        return r.emit(f"arith.muli {a.name}, {c(k).name} : i64", "i64")

    z = r.emit(f"arith.addi {x.name}, {c(_GOLDEN).name} : i64", "i64")
    z = mul_(xor(z, shr(z, 30)), _MIX1)
    z = mul_(xor(z, shr(z, 27)), _MIX2)
    return xor(z, shr(z, 31))


def _gumbel_perturb(r: Body, logit: Val, index: Val, coords, noise, elem: str) -> Val:
    """logit / temperature - log(-log(u)), u uniform in (0, 1) from a hash of
    (seed, coordinates..., index)."""
    seed = noise["seed"]
    h = seed if isinstance(seed, Val) else r.const_scalar(seed, "i64")
    for p in coords:
        ci = r.emit(f"arith.index_cast {p.name} : index to i64", "i64")
        h = _splitmix(r, r.emit(f"arith.xori {h.name}, {ci.name} : i64", "i64"))
    h = _splitmix(r, r.emit(f"arith.xori {h.name}, {index.name} : i64", "i64"))
    top = r.emit(f"arith.shrui {h.name}, {r.const_scalar(11, 'i64').name} : i64", "i64")
    f = r.emit(f"arith.uitofp {top.name} : i64 to f64", "f64")
    half = r.const_scalar(0.5, "f64")
    scale = r.const_scalar(2.0**-53, "f64")
    u = r.emit(
        f"arith.mulf {r.emit(f'arith.addf {f.name}, {half.name} : f64', 'f64').name}, "
        f"{scale.name} : f64",
        "f64",
    )
    l1 = r.emit(f"math.log {u.name} : f64", "f64")
    n1 = r.emit(f"arith.negf {l1.name} : f64", "f64")
    l2 = r.emit(f"math.log {n1.name} : f64", "f64")
    g = r.emit(f"arith.negf {l2.name} : f64", "f64")
    if elem != "f64":
        g = r.emit(f"arith.truncf {g.name} : f64 to {elem}", elem)
    temp = r.const_scalar(noise["temperature"], "f64" if elem == "f64" else "f32")
    scaled = r.emit(f"arith.divf {logit.name}, {temp.name} : {elem}", elem)
    return r.emit(f"arith.addf {scaled.name}, {g.name} : {elem}", elem)


def sample(
    logits: TensorLike,
    seed: int = 0,
    temperature: float = 1.0,
    at: dict[str, TensorLike] | None = None,
) -> RecurrentTensor:
    """Draws an index from softmax(logits / temperature) along the last axis,
    by the Gumbel-max trick with noise from a counter-based hash of the seed
    and the point's coordinates: reproducible on every backend. The seed is
    a Python int, or an i64 scalar tensor (e.g. a program input, so each run
    of a compiled program can draw anew). `at`: for some dims of the point
    (by name), an i64 scalar the hash reads in place of the coordinate, so
    a program that numbers its steps differently (a decode loop that starts
    after a shared prefill) can draw what one numbered by position draws."""
    if not is_float(logits.dtype):
        raise ProgramError("sample() needs float logits")
    if isinstance(seed, TensorLike):
        if seed.dtype != "i64" or seed.shape:
            raise ProgramError("sample() needs an i64 scalar seed tensor")
    elif not isinstance(seed, int) or isinstance(seed, bool):
        raise ProgramError("sample() needs an integer seed (a Python int or an i64 scalar)")
    if temperature <= 0:
        raise ProgramError("sample() needs a positive temperature", hint="use argmax for greedy")
    ax = logits.ndim - 1
    shape = tuple(logits.shape[:-1])
    names = tuple(d.name for d in logits.domain)
    at = dict(at or {})
    for name, value in at.items():
        if name not in names:
            raise ProgramError(
                f"sample(at=...): '{name}' is not a dim of the logits' domain [{', '.join(names)}]"
            )
        if not isinstance(value, TensorLike) or value.dtype != "i64" or value.shape:
            raise ProgramError(f"sample(at=...): the coordinate for '{name}' must be an i64 scalar")
    extra = list(at.values())
    noise = {"seed": seed, "temperature": float(temperature), "dims": names, "at": tuple(at)}
    if isinstance(seed, TensorLike):
        noise["seed"] = None
        extra.insert(0, seed)
    return _make(ARGMAX, [logits, *extra], TensorType(shape, "i64"), axis=ax, noise=noise)


# ---------------------------------------------------------------------------
# Indexing within a point: gather, concatenation, reshape, permute
# ---------------------------------------------------------------------------


def _emit_take(body: Body, args, type_: TensorType, attrs) -> Val:
    table, idx = args
    axis = attrs["axis"]
    t_rank, i_rank = table.tensor.rank, idx.tensor.rank
    sizes = []
    for o, d in enumerate(type_.shape):
        if d is None:
            if axis <= o < axis + i_rank:
                sizes.append(body.dim_size(idx, o - axis))
            else:
                src = o if o < axis else o - i_rank + 1
                sizes.append(body.dim_size(table, src))
    init = body.empty(type_, sizes)
    elem = scalar_type(type_.dtype)

    def region(r: Body, ins, outs):
        coords = []
        for ax in range(t_rank):
            if ax == axis:
                coords.append(
                    r.emit(f"arith.index_cast {ins[0].name} : {ins[0].type} to index", "index")
                )
            else:
                o = ax if ax < axis else ax + i_rank - 1
                coords.append(r.emit(f"linalg.index {o} : index", "index"))
        return [
            r.emit(
                f"tensor.extract {table.name}[{', '.join(c.name for c in coords)}] : "
                f"{table.tensor.mlir()}",
                elem,
            )
        ]

    idx_map = ", ".join(f"d{axis + i}" for i in range(i_rank))
    out_map = ", ".join(f"d{i}" for i in range(type_.rank))
    return body.generic([(idx, idx_map)], [(init, out_map)], ["parallel"] * type_.rank, region)[0]


TAKE = OpSpec("take", _emit_take)


def take(table: TensorLike, indices: TensorLike, axis: int = 0) -> RecurrentTensor:
    """NumPy's take: table[..., indices, ...] along `axis` (an embedding
    lookup is take(weights, ids, 0)). Indices out of range are an error at
    run time."""
    if not is_int(indices.dtype):
        raise ProgramError("take() needs integer indices", hint="cast with .astype('i64')")
    (ax,) = _axes(axis, table.ndim)
    shape = tuple(table.shape[:ax]) + tuple(indices.shape) + tuple(table.shape[ax + 1 :])
    return _make(TAKE, [table, indices], TensorType(shape, table.dtype), axis=ax)


def _emit_concat(body: Body, args, type_: TensorType, attrs) -> Val:
    names = ", ".join(a.name for a in args)
    types = ", ".join(a.tensor.mlir() for a in args)
    return body.emit(
        f"tensor.concat dim({attrs['axis']}) {names} : ({types}) -> {type_.mlir()}", type_
    )


CONCAT = OpSpec("concat", _emit_concat)


def concat(xs: Sequence[TensorLike], axis: int = 0) -> RecurrentTensor:
    if not xs:
        raise ProgramError("concat() needs at least one tensor")
    rank = xs[0].ndim
    (ax,) = _axes(axis, rank)
    dtype = xs[0].dtype
    total = 0
    for x in xs:
        if x.ndim != rank or x.dtype != dtype:
            raise ProgramError("concat() operands must have the same rank and dtype")
        for i in range(rank):
            if i != ax and x.shape[i] != xs[0].shape[i]:
                raise ProgramError(f"concat() operands differ in dim {i}")
        total = None if total is None or x.shape[ax] is None else total + x.shape[ax]
    shape = tuple(total if i == ax else d for i, d in enumerate(xs[0].shape))
    return _make(CONCAT, list(xs), TensorType(shape, dtype), axis=ax)


def _emit_reshape(body: Body, args, type_: TensorType, attrs) -> Val:
    (x,) = args
    shape_type = TensorType((type_.rank,), "i64")
    values = ", ".join(str(d) for d in type_.shape)
    shape = body.emit(f"arith.constant dense<[{values}]> : {shape_type.mlir()}", shape_type)
    return body.emit(
        f"tensor.reshape {x.name}({shape.name}) : ({x.tensor.mlir()}, {shape_type.mlir()}) -> "
        f"{type_.mlir()}",
        type_,
    )


RESHAPE = OpSpec("reshape", _emit_reshape)


def reshape(x: TensorLike, shape: Sequence[int]) -> RecurrentTensor:
    """Reshape with static sizes (one -1 is inferred)."""
    if any(d is None for d in x.shape):
        raise ProgramError("reshape() needs a tensor of static shape")
    n = 1
    for d in x.shape:
        n *= d
    shape = list(shape)
    if shape.count(-1) > 1:
        raise ProgramError("reshape() infers at most one -1")
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        if known == 0 or n % known:
            raise ProgramError(f"cannot reshape {x.shape} into {tuple(shape)}")
        shape[shape.index(-1)] = n // known
    total = 1
    for d in shape:
        total *= d
    if total != n:
        raise ProgramError(f"cannot reshape {x.shape} into {tuple(shape)}")
    if x.ndim == 0 and not shape:
        return cast_to(x, x.dtype)
    return _make(RESHAPE, [x], TensorType(tuple(shape), x.dtype))


def _emit_permute(body: Body, args, type_: TensorType, attrs) -> Val:
    (x,) = args
    perm = attrs["perm"]
    sizes = [body.dim_size(x, perm[i]) for i, d in enumerate(type_.shape) if d is None]
    init = body.empty(type_, sizes)
    return body.emit(
        f"linalg.transpose ins({x.name} : {x.tensor.mlir()}) outs({init.name} : {type_.mlir()}) "
        f"permutation = [{', '.join(map(str, perm))}]",
        type_,
    )


PERMUTE = OpSpec("permute", _emit_permute)


def permute(x: TensorLike, perm: Sequence[int]) -> RecurrentTensor:
    perm = tuple(perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ProgramError(f"{perm} is not a permutation of the {x.ndim} axes")
    return _make(PERMUTE, [x], TensorType(tuple(x.shape[p] for p in perm), x.dtype), perm=perm)


def transpose(x: TensorLike) -> RecurrentTensor:
    """Reverses the axes (the last two for rank > 2 is permute's job)."""
    return permute(x, tuple(reversed(range(x.ndim))))
