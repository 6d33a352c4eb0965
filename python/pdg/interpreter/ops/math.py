"""math: elementwise functions on floats (and absi).

NumPy computes these in the operand's own dtype (f32 stays f32). erf has no
NumPy ufunc: it is computed in float64 with the standard library and rounded
to the operand's type, which is at least as accurate as a compiled erf.
"""

from __future__ import annotations

import math

import numpy as np

from ..body import BodyOp, Executor
from ..types import as_signed, elem_of, wrap
from .table import HandlerTable

HANDLERS = HandlerTable()


def _libm(fn):
    vec = np.vectorize(fn, otypes=[np.float64])

    def apply(x):
        x = np.asarray(x)
        return vec(x.astype(np.float64)).astype(x.dtype)

    return apply


def _round_half_away(x):
    """math.round rounds halves away from zero (np.round rounds to even)."""
    t = np.trunc(x)
    step = np.where(np.abs(x - t) >= 0.5, np.sign(x), 0).astype(np.asarray(x).dtype)
    return t + step


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


_UNARY = {
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": np.expm1,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": np.log1p,
    "math.sqrt": np.sqrt,
    "math.rsqrt": _rsqrt,
    "math.cbrt": np.cbrt,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.atan": np.arctan,
    "math.sinh": np.sinh,
    "math.cosh": np.cosh,
    "math.tanh": np.tanh,
    "math.asinh": np.arcsinh,
    "math.acosh": np.arccosh,
    "math.atanh": np.arctanh,
    "math.erf": _libm(math.erf),
    "math.erfc": _libm(math.erfc),
    "math.absf": np.abs,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.trunc": np.trunc,
    "math.round": _round_half_away,
    "math.roundeven": np.rint,
}

_BINARY = {
    "math.powf": np.power,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
}

_PREDICATES = {
    "math.isnan": np.isnan,
    "math.isinf": np.isinf,
    "math.isfinite": np.isfinite,
}


def _apply(fn):
    def handler(ex: Executor, op: BodyOp, args: list):
        return fn(*args)

    return handler


for _table in (_UNARY, _BINARY, _PREDICATES):
    for _name, _fn in _table.items():
        HANDLERS[_name] = _apply(_fn)


@HANDLERS.register("math.fma")
def fma(ex: Executor, op: BodyOp, args: list):
    a, b, c = (np.asarray(x) for x in args)
    dtype = a.dtype
    if dtype.itemsize < 8:
        # The exact product of two f32 (or f16) fits in f64: one rounding
        # for the product and sum there, then one to the type.
        return (a.astype(np.float64) * b + c).astype(dtype)
    return a * b + c


@HANDLERS.register("math.fpowi")
def fpowi(ex: Executor, op: BodyOp, args: list):
    """A float to an integer power (torch.pow(x, 3) lowers to it). An
    integral exponent in the float type gives powf's exact cases: negative
    bases stay real."""
    x = np.asarray(args[0])
    return np.power(x, np.asarray(args[1]).astype(x.dtype))


@HANDLERS.register("math.absi")
def absi(ex: Executor, op: BodyOp, args: list):
    e = elem_of(op.result_types[0])
    return wrap(np.abs(as_signed(args[0], e)), e)
