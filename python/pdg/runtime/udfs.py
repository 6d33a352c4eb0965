"""Host callbacks for compiled udfs: each slot of the library's
`pdg_udf_table` gets a ctypes callback that reads the inputs' memref
descriptors as NumPy arrays, calls the user's function, checks and
converts its result like the interpreter does, and writes it into the
result slot. A callback that fails records why and returns 1; the library
then skips the remaining calls and ends its loop (see
pdg.lowering.support), and the runtime raises the recorded error."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping

import numpy as np

from .memref import ELEMENTS, descriptor_type, to_array, view_array

CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)
)


class UdfFailure(Exception):
    """A udf raised or returned something that does not fit its result."""


def convert_dtype(name: str, result, want: np.dtype) -> np.ndarray:
    """A copy of a udf's result with dtype `want`, if it converts safely
    (same kind, and integers that fit); the interpreter uses it too."""
    array = np.array(result)  # a copy: the caller may keep and change its own
    if array.dtype != want:
        if not np.can_cast(array.dtype, want, casting="same_kind"):
            raise UdfFailure(
                f"udf '{name}' returned dtype {array.dtype}, which does not convert safely to "
                f"{want}"
            )
        converted = array.astype(want)
        if want.kind in "iu" and not np.array_equal(converted, array):
            raise UdfFailure(f"udf '{name}' returned values that do not fit in {want}")
        array = converted
    return array


def convert_result(name: str, result, spec: dict) -> np.ndarray:
    array = convert_dtype(name, result, np.dtype(ELEMENTS[spec["element"]]))
    if list(array.shape) != list(spec["shape"]):
        raise UdfFailure(
            f"udf '{name}' returned shape {list(array.shape)}, its result has shape {spec['shape']}"
        )
    return array


class UdfTable:
    """Fills the library's table for one run and keeps the first failure."""

    def __init__(self, library: ctypes.CDLL, specs: list[dict], functions: Mapping[str, Callable]):
        self.specs = specs
        self.functions = functions
        self.failure: tuple[dict, BaseException, tuple[int, ...]] | None = None
        self._callbacks = [CALLBACK(self._call) for _ in specs]  # kept alive for the run
        self._table = (ctypes.c_void_p * max(len(specs), 1)).in_dll(library, "pdg_udf_table")
        self._abort = ctypes.c_int8.in_dll(library, "pdg_abort")

    def __enter__(self) -> UdfTable:
        self._abort.value = 0
        for k, callback in enumerate(self._callbacks):
            self._table[k] = ctypes.cast(callback, ctypes.c_void_p)
        return self

    def __exit__(self, *exc) -> None:
        for k in range(len(self._callbacks)):
            self._table[k] = None

    def _call(self, slot: int, descriptors, coords) -> int:
        spec = self.specs[slot]
        point = tuple(coords[i] for i in range(len(spec["domain"])))
        try:
            args = []
            for i, arg in enumerate(spec["args"]):
                d = ctypes.cast(descriptors[i], ctypes.POINTER(descriptor_type(arg["rank"])))
                array = to_array(d.contents, arg["rank"], arg["element"])
                array.flags.writeable = False  # as in the interpreter
                args.append(array)
            result = convert_result(
                spec["name"], self.functions[spec["name"]](*args), spec["result"]
            )
            rank = len(spec["result"]["shape"])
            out = ctypes.cast(descriptors[len(spec["args"])], ctypes.POINTER(descriptor_type(rank)))
            view_array(out.contents, rank, spec["result"]["element"])[...] = result
            return 0
        except BaseException as e:  # reported after the run, never lost in C
            if self.failure is None:
                self.failure = (spec, e, point)
            return 1
