"""Element types and per-point tensor types of the frontend."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pdg.runtime.memref import bfloat16

# Frontend dtype name -> (MLIR element type, NumPy dtype). bf16's NumPy
# dtype comes from ml_dtypes (the models extra), imported when first used.
_DTYPES = {
    "f32": ("f32", np.float32),
    "bf16": ("bf16", None),
    "f64": ("f64", np.float64),
    "i64": ("i64", np.int64),
    "i32": ("i32", np.int32),
    "bool": ("i1", np.bool_),
}
_ALIASES = {
    "float32": "f32",
    "float64": "f64",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "i1": "bool",
    "bool_": "bool",
}


def canonical_dtype(dtype: object) -> str:
    """'f32', 'f64', 'bf16', 'i64', 'i32' or 'bool' from a name or a NumPy
    dtype."""
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
    else:
        try:
            name = _ALIASES.get(np.dtype(dtype).name, np.dtype(dtype).name)
        except TypeError:
            name = str(dtype)
    if name not in _DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; use one of {', '.join(sorted(_DTYPES))}")
    return name


def mlir_element(dtype: str) -> str:
    return _DTYPES[dtype][0]


def numpy_dtype(dtype: str) -> np.dtype:
    if dtype == "bf16":
        return bfloat16()
    return np.dtype(_DTYPES[dtype][1])


def is_float(dtype: str) -> bool:
    """A float that operators compute in. bf16 is not one: it is a storage
    type (weights), read by take, transposes, casts and products, which
    widen it to f32 (see is_storage_float)."""
    return dtype in ("f32", "f64")


def is_storage_float(dtype: str) -> bool:
    """bf16: stored in half the bytes of f32, widened to f32 when read."""
    return dtype == "bf16"


def float_width(dtype: str) -> int:
    return {"bf16": 16, "f32": 32, "f64": 64}[dtype]


def is_int(dtype: str) -> bool:
    return dtype in ("i64", "i32")


Shape = tuple  # of int (static) or None (symbolic size)


@dataclass(frozen=True)
class TensorType:
    """The value at one point: a shape (None: symbolic size) and a dtype."""

    shape: Shape
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    def mlir(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{mlir_element(self.dtype)}>"

    def with_dtype(self, dtype: str) -> TensorType:
        return TensorType(self.shape, dtype)
