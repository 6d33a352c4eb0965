"""arith: constants, integer and float arithmetic, comparisons, casts.

Every handler works on scalars (0-d arrays) and tensors alike, elementwise,
which is also what lets linalg.generic run its region on whole arrays.
Integer ops compute on values read as signed or unsigned (`as_signed`,
`as_unsigned`) and `wrap` the result to the type's width: i1 arithmetic is
then exactly arith's (addi on i1 is xor, maxsi(true, false) is false).
Division by zero and out-of-range shifts or float-to-int conversions are
undefined behavior or poison in arith; the reference reports them.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from ..body import BodyOp, Executor
from ..errors import InterpreterError
from ..types import ElemType, TensorType, as_signed, as_unsigned, elem_of, wrap
from .table import HandlerTable

HANDLERS = HandlerTable()


def result_elem(op: BodyOp, i: int = 0) -> ElemType:
    return elem_of(op.result_types[i])


def operand_elem(op: BodyOp, i: int = 0) -> ElemType:
    return elem_of(op.operand_types[i])


# --- constants -------------------------------------------------------------


def attribute_array(attr: ir.Attribute, t: ElemType | TensorType) -> np.ndarray:
    """The value of a constant attribute as an array of `t`."""
    elem = elem_of(t)
    if isinstance(attr, ir.DenseElementsAttr) and attr.is_splat:
        # One value for every element. Read through the buffer protocol, a
        # splat of i1 gives a buffer of one byte viewed as the whole shape:
        # 8 elements of its bits and then whatever memory follows (MLIR's
        # Python bindings), so the splat value is read alone and broadcast.
        shape = tuple(int(s) for s in t.shape) if isinstance(t, TensorType) else ()
        one = attribute_array(attr.get_splat_value(), elem)
        arr = np.broadcast_to(one, shape).copy()
    elif isinstance(attr, ir.DenseElementsAttr):
        try:
            arr = np.array(attr)
        except (TypeError, ValueError, RuntimeError) as e:
            raise InterpreterError(f"cannot read the constant {attr}: {e}") from None
        shape = tuple(int(s) for s in t.shape) if isinstance(t, TensorType) else ()
        arr = wrap(arr, elem) if elem.is_integer else arr.astype(elem.dtype)
        arr = np.broadcast_to(arr, shape).copy() if arr.shape != shape else arr
    elif isinstance(attr, ir.BoolAttr):
        arr = np.asarray(bool(attr.value))
    elif isinstance(attr, ir.IntegerAttr):
        arr = wrap(np.asarray(int(attr.value), dtype=np.int64), elem)
    elif isinstance(attr, ir.FloatAttr):
        arr = np.asarray(attr.value, dtype=elem.dtype)
    else:
        raise InterpreterError(f"unsupported constant attribute {attr}")
    arr.setflags(write=False)  # shared by every point: never written
    return arr


@HANDLERS.register("arith.constant")
def constant(ex: Executor, op: BodyOp, args: list):
    return op.memo("value", lambda: attribute_array(op.attr("value"), op.result_types[0]))


# --- integer arithmetic ----------------------------------------------------


def _nonzero_divisor(b: np.ndarray) -> None:
    if np.any(b == 0):
        raise InterpreterError(
            "division by zero (undefined behavior in arith)",
            hint="guard the divisor, e.g. with arith.select or arith.maxsi",
        )


def _signed(fn):
    def handler(ex: Executor, op: BodyOp, args: list):
        e = result_elem(op)
        return wrap(fn(*(as_signed(a, e) for a in args)), e)

    return handler


def _unsigned(fn):
    def handler(ex: Executor, op: BodyOp, args: list):
        e = result_elem(op)
        return wrap(fn(*(as_unsigned(a, e) for a in args)), e)

    return handler


def _divsi(a, b):
    _nonzero_divisor(b)
    q = np.floor_divide(a, b)
    # Floor to truncation: one step towards zero when inexact and signs differ.
    inexact = (a - q * b) != 0
    return q + (inexact & ((a < 0) != (b < 0)))


def _remsi(a, b):
    _nonzero_divisor(b)
    return np.fmod(a, b)  # the sign of the dividend, like C


def _floordivsi(a, b):
    _nonzero_divisor(b)
    return np.floor_divide(a, b)


def _ceildivsi(a, b):
    _nonzero_divisor(b)
    q = np.floor_divide(a, b)
    return q + ((a - q * b) != 0)


def _divui(a, b):
    _nonzero_divisor(b)
    return np.floor_divide(a, b)


def _remui(a, b):
    _nonzero_divisor(b)
    return np.remainder(a, b)


for _name, _fn in {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.divsi": _divsi,
    "arith.remsi": _remsi,
    "arith.floordivsi": _floordivsi,
    "arith.ceildivsi": _ceildivsi,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
}.items():
    HANDLERS[_name] = _signed(_fn)

for _name, _fn in {
    "arith.divui": _divui,
    "arith.remui": _remui,
    "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
}.items():
    HANDLERS[_name] = _unsigned(_fn)


def _shift_amount(b: np.ndarray, e: ElemType) -> np.ndarray:
    amount = as_unsigned(b, e)
    if np.any(amount >= e.width):
        raise InterpreterError(
            f"shift amount of {int(np.max(amount))} is not below the bit width {e.width}: "
            "the result is poison"
        )
    return amount


@HANDLERS.register("arith.shli")
def shli(ex: Executor, op: BodyOp, args: list):
    e = result_elem(op)
    a = as_unsigned(args[0], e)
    return wrap(np.left_shift(a, _shift_amount(args[1], e).astype(a.dtype)), e)


@HANDLERS.register("arith.shrui")
def shrui(ex: Executor, op: BodyOp, args: list):
    e = result_elem(op)
    a = as_unsigned(args[0], e)
    return wrap(np.right_shift(a, _shift_amount(args[1], e).astype(a.dtype)), e)


@HANDLERS.register("arith.shrsi")
def shrsi(ex: Executor, op: BodyOp, args: list):
    e = result_elem(op)
    a = as_signed(args[0], e)
    return wrap(np.right_shift(a, _shift_amount(args[1], e).astype(a.dtype)), e)


_CMPI = {
    0: ("eq", np.equal, False),
    1: ("ne", np.not_equal, False),
    2: ("slt", np.less, False),
    3: ("sle", np.less_equal, False),
    4: ("sgt", np.greater, False),
    5: ("sge", np.greater_equal, False),
    6: ("ult", np.less, True),
    7: ("ule", np.less_equal, True),
    8: ("ugt", np.greater, True),
    9: ("uge", np.greater_equal, True),
}


@HANDLERS.register("arith.cmpi")
def cmpi(ex: Executor, op: BodyOp, args: list):
    e = operand_elem(op)
    _, fn, unsigned = _CMPI[int(op.attr("predicate").value)]
    read = as_unsigned if unsigned else as_signed
    return fn(read(args[0], e), read(args[1], e))


# --- float arithmetic ------------------------------------------------------


def _float(fn):
    def handler(ex: Executor, op: BodyOp, args: list):
        return fn(*args)

    return handler


def _zero_sign(a, b, r, negative):
    """IEEE maximum/minimum order -0 below +0; NumPy does not."""
    zeros = (a == 0) & (b == 0)
    if not np.any(zeros):
        return r
    neg = negative(np.signbit(a), np.signbit(b))
    signed_zero = np.where(neg, -0.0, 0.0).astype(np.result_type(r))
    return np.where(zeros, signed_zero, r)


def maximumf(a, b):
    return _zero_sign(a, b, np.maximum(a, b), np.logical_and)


def minimumf(a, b):
    return _zero_sign(a, b, np.minimum(a, b), np.logical_or)


for _name, _fn in {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.negf": np.negative,
    "arith.maximumf": maximumf,
    "arith.minimumf": minimumf,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
}.items():
    HANDLERS[_name] = _float(_fn)


def _cmp_ordered(fn):
    return lambda a, b: ~(np.isnan(a) | np.isnan(b)) & fn(a, b)


def _cmp_unordered(fn):
    return lambda a, b: np.isnan(a) | np.isnan(b) | fn(a, b)


_CMPF = {
    0: lambda a, b: np.zeros(np.broadcast(a, b).shape, np.bool_),
    1: _cmp_ordered(np.equal),
    2: _cmp_ordered(np.greater),
    3: _cmp_ordered(np.greater_equal),
    4: _cmp_ordered(np.less),
    5: _cmp_ordered(np.less_equal),
    6: _cmp_ordered(np.not_equal),
    7: lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    8: _cmp_unordered(np.equal),
    9: _cmp_unordered(np.greater),
    10: _cmp_unordered(np.greater_equal),
    11: _cmp_unordered(np.less),
    12: _cmp_unordered(np.less_equal),
    13: _cmp_unordered(np.not_equal),
    14: lambda a, b: np.isnan(a) | np.isnan(b),
    15: lambda a, b: np.ones(np.broadcast(a, b).shape, np.bool_),
}


@HANDLERS.register("arith.cmpf")
def cmpf(ex: Executor, op: BodyOp, args: list):
    return _CMPF[int(op.attr("predicate").value)](args[0], args[1])


@HANDLERS.register("arith.select")
def select(ex: Executor, op: BodyOp, args: list):
    cond, a, b = args
    return np.where(cond, a, b)


# --- casts -----------------------------------------------------------------


@HANDLERS.register("arith.extsi", "arith.trunci", "arith.index_cast")
def cast_signed(ex: Executor, op: BodyOp, args: list):
    # Sign-extends when widening, truncates when narrowing.
    return wrap(as_signed(args[0], operand_elem(op)), result_elem(op))


@HANDLERS.register("arith.extui", "arith.index_castui")
def cast_unsigned(ex: Executor, op: BodyOp, args: list):
    src = operand_elem(op)
    return wrap(as_unsigned(args[0], src).astype(np.uint64), result_elem(op))


@HANDLERS.register("arith.sitofp")
def sitofp(ex: Executor, op: BodyOp, args: list):
    return as_signed(args[0], operand_elem(op)).astype(result_elem(op).dtype)


@HANDLERS.register("arith.uitofp")
def uitofp(ex: Executor, op: BodyOp, args: list):
    return as_unsigned(args[0], operand_elem(op)).astype(result_elem(op).dtype)


def _float_to_int(x: np.ndarray, e: ElemType, unsigned: bool) -> np.ndarray:
    t = np.trunc(np.asarray(x, dtype=np.float64))
    bits = 1 if e.is_bool else e.width
    # [lo, end): the bounds are powers of two, exact in float64.
    lo, end = (0, 2.0**bits) if unsigned else (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1))
    bad = ~np.isfinite(t) | (t < lo) | (t >= end)
    if np.any(bad):
        raise InterpreterError(
            f"converting {np.asarray(x)[bad].ravel()[0]} to {'unsigned ' if unsigned else ''}"
            f"{e} is out of range: the result is poison"
        )
    if unsigned:
        return wrap(t.astype(np.uint64), e)
    return wrap(t.astype(np.int64), e)


@HANDLERS.register("arith.fptosi")
def fptosi(ex: Executor, op: BodyOp, args: list):
    return _float_to_int(args[0], result_elem(op), unsigned=False)


@HANDLERS.register("arith.fptoui")
def fptoui(ex: Executor, op: BodyOp, args: list):
    return _float_to_int(args[0], result_elem(op), unsigned=True)


@HANDLERS.register("arith.extf", "arith.truncf")
def float_cast(ex: Executor, op: BodyOp, args: list):
    # NumPy rounds to nearest even when narrowing, as arith.truncf does by default.
    return np.asarray(args[0]).astype(result_elem(op).dtype)


@HANDLERS.register("arith.bitcast")
def bitcast(ex: Executor, op: BodyOp, args: list):
    src, dst = operand_elem(op), result_elem(op)
    if src.width != dst.width or src.kind == "index" or dst.kind == "index":
        raise InterpreterError(f"cannot bitcast {src} to {dst}")
    if src.is_bool or dst.is_bool:
        return np.asarray(args[0])
    return np.ascontiguousarray(args[0]).view(dst.dtype)
