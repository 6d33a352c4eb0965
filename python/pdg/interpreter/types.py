"""MLIR types as NumPy storage.

Floats keep their width (f16/f32/f64), signless integers are stored in the
signed NumPy type of their width (wrapping two's complement arithmetic comes
for free), i1 is `bool` and `index` is int64. Operations that read integers
as unsigned go through `as_unsigned`; results are brought back to the storage
type with `wrap`, which truncates like the hardware does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from .errors import InterpreterError

_DYNAMIC = ir.ShapedType.get_dynamic_size()


@dataclass(frozen=True)
class ElemType:
    """A scalar type: `kind` is "float", "int" (signless, i1 included) or "index"."""

    name: str
    kind: str
    width: int
    dtype: np.dtype

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_bool(self) -> bool:
        return self.kind == "int" and self.width == 1

    @property
    def is_integer(self) -> bool:
        """Integers and index: everything arith's integer ops accept."""
        return self.kind in ("int", "index")

    @property
    def unsigned_dtype(self) -> np.dtype:
        return np.dtype(np.uint8) if self.is_bool else np.dtype(f"uint{self.width}")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor; `None` in `shape` is a dynamic (`?`) size."""

    shape: tuple[int | None, ...]
    elem: ElemType

    @property
    def rank(self) -> int:
        return len(self.shape)

    def matches(self, shape: tuple[int, ...]) -> bool:
        """True if a concrete shape fits this type (`?` fits any size)."""
        return len(shape) == len(self.shape) and all(
            s is None or s == c for s, c in zip(self.shape, shape, strict=True)
        )

    def __str__(self) -> str:
        dims = "".join(("?" if s is None else str(s)) + "x" for s in self.shape)
        return f"tensor<{dims}{self.elem}>"


Type = ElemType | TensorType

_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_INT_WIDTHS = (1, 8, 16, 32, 64)
INDEX = ElemType("index", "index", 64, np.dtype(np.int64))


def elem_type(t: ir.Type) -> ElemType:
    """The ElemType of a scalar MLIR type; unsupported types raise."""
    text = str(t)
    if text in _FLOATS:
        return ElemType(
            text, "float", np.dtype(_FLOATS[text]).itemsize * 8, np.dtype(_FLOATS[text])
        )
    if text == "bf16":  # weights stored in bf16 (ml_dtypes, imported when met)
        from pdg.runtime.memref import bfloat16

        return ElemType(text, "float", 16, bfloat16())
    if text == "index":
        return INDEX
    if isinstance(t, ir.IntegerType) and t.is_signless and t.width in _INT_WIDTHS:
        dtype = np.dtype(np.bool_) if t.width == 1 else np.dtype(f"int{t.width}")
        return ElemType(text, "int", t.width, dtype)
    raise InterpreterError(
        f"unsupported element type {text}",
        hint="the interpreter handles f16, bf16, f32, f64, i1, i8, i16, i32, i64 and index",
    )


def convert_type(t: ir.Type) -> Type:
    """An MLIR scalar or ranked tensor type as an ElemType or TensorType."""
    if isinstance(t, ir.RankedTensorType):
        shape = tuple(None if s == _DYNAMIC else int(s) for s in t.shape)
        return TensorType(shape, elem_type(t.element_type))
    if isinstance(t, ir.ShapedType):
        raise InterpreterError(f"unsupported type {t}", hint="only ranked tensors are interpreted")
    return elem_type(t)


def elem_of(t: Type) -> ElemType:
    return t.elem if isinstance(t, TensorType) else t


def is_dynamic(size: int) -> bool:
    return size == _DYNAMIC


def wrap(x, elem: ElemType) -> np.ndarray:
    """Integer values (any NumPy integer or bool dtype) truncated to `elem`'s width."""
    x = np.asarray(x)
    if elem.is_bool:
        if x.dtype == np.bool_:
            return x
        return (x & 1).astype(np.bool_)
    return x.astype(elem.dtype, copy=False)


def as_signed(x, elem: ElemType) -> np.ndarray:
    """Integers read as signed; an i1 `true` is -1, as sign extension gives."""
    x = np.asarray(x)
    if elem.is_bool:
        return -(x.astype(np.int8))
    return x


def as_unsigned(x, elem: ElemType) -> np.ndarray:
    """Integers read as unsigned (two's complement bits reinterpreted)."""
    x = np.asarray(x)
    return x.astype(elem.unsigned_dtype)


def coerce(value, t: Type, check_shape: bool) -> np.ndarray:
    """A handler's result in `t`'s storage dtype; tensors' shapes are checked.

    Handlers compute in the right dtype already; the cast catches NumPy's
    promotions (a float32 array times a Python float) so widths never drift.
    """
    arr = np.asarray(value)
    elem = elem_of(t)
    if arr.dtype != elem.dtype:
        if elem.is_bool:
            arr = arr.astype(np.bool_) if arr.dtype == np.bool_ else wrap(arr, elem)
        else:
            arr = arr.astype(elem.dtype)
    if check_shape and isinstance(t, TensorType) and not t.matches(arr.shape):
        raise InterpreterError(f"produced an array of shape {arr.shape}, but its type is {t}")
    return arr
