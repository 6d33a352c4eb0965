"""MLIR memref descriptors as ctypes structures, built from and read into
NumPy arrays. The layout is MLIR's C interface for a ranked memref:
allocated pointer, aligned pointer, offset, sizes[rank], strides[rank]."""

from __future__ import annotations

import ctypes

import numpy as np


def bfloat16() -> np.dtype:
    """ml_dtypes' bfloat16 (NumPy has none), imported only when a program
    has bf16 values; a clear error without the package. The one place
    pdg's layers (frontend, interpreter, runtime) get it from."""
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(
            "bf16 values need the ml_dtypes package: pip install 'pdg[models]'"
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


class _Elements(dict):
    """Element name -> NumPy dtype; bf16 from ml_dtypes, when met."""

    def __missing__(self, key: str):
        if key != "bf16":
            raise KeyError(key)
        self[key] = bfloat16().type
        return self[key]


# Element types as the compiled code stores them (booleans take a byte).
ELEMENTS = _Elements(
    {
        "f64": np.float64,
        "f32": np.float32,
        "f16": np.float16,
        "i64": np.int64,
        "i32": np.int32,
        "i16": np.int16,
        "i8": np.int8,
        "i1": np.bool_,
        "index": np.int64,
    }
)


def from_npy_bf16(array: np.ndarray, want: np.dtype) -> np.ndarray:
    """`array` as bf16 where the program takes bf16 and `array` is what an
    .npy/.npz file gives back for ml_dtypes' bfloat16 (2-byte voids: NumPy
    does not know the type); otherwise `array` as it is."""
    if want.name == "bfloat16" and array.dtype == np.dtype("V2"):
        return array.view(want)
    return array


_DESCRIPTORS: dict[int, type] = {}


def descriptor_type(rank: int) -> type:
    if rank not in _DESCRIPTORS:
        fields = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
        ]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


def to_descriptor(array: np.ndarray):
    """A descriptor viewing `array` (C-contiguous; kept alive by the caller)."""
    d = descriptor_type(array.ndim)()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    if array.ndim:
        for i, (n, s) in enumerate(zip(array.shape, array.strides, strict=True)):
            d.sizes[i] = n
            d.strides[i] = s // array.itemsize
    return d


def view_array(d, rank: int, element: str) -> np.ndarray:
    """A NumPy view of the memory `d` describes (valid while it lives)."""
    dtype = np.dtype(ELEMENTS[element])
    sizes = [d.sizes[i] for i in range(rank)]
    steps = [d.strides[i] for i in range(rank)]
    if 0 in sizes:
        return np.zeros(sizes, dtype)
    span = dtype.itemsize * (1 + sum((n - 1) * s for n, s in zip(sizes, steps, strict=True)))
    base = d.aligned + d.offset * dtype.itemsize
    flat = np.frombuffer((ctypes.c_char * span).from_address(base), dtype=dtype)
    strides = [s * dtype.itemsize for s in steps]
    return np.lib.stride_tricks.as_strided(flat, sizes, strides)


def to_array(d, rank: int, element: str) -> np.ndarray:
    """A NumPy copy of the memref `d` describes."""
    return view_array(d, rank, element).copy()
