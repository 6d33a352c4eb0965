"""Calling a compiled program's entry on the CPU with ctypes: NumPy inputs
become memref descriptors, the results come back as NumPy arrays (ragged
per sequence where sequences ended at different steps), and every buffer
the compiled code allocated for them is freed. Needs only NumPy and the
standard library."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping

import numpy as np

from .memref import ELEMENTS, descriptor_type, to_array, to_descriptor, view_array
from .udfs import UdfFailure, UdfTable


class UdfError(Exception):
    """A udf failed during a run; the run ended early and freed its memory."""


class Entry:
    """The entry function of a loaded library, described by `abi` (the
    manifest's JSON form of pdg.lowering.driver.EntryABI)."""

    def __init__(self, library: ctypes.CDLL, abi: dict):
        self.abi = abi
        self.library = library
        self.fn = getattr(library, f"_mlir_ciface_{abi['entry']}")
        self.fn.restype = None
        # The support code's counting allocator (pdg.lowering.support).
        self._free = library._mlir_memref_to_llvm_free
        self._free.argtypes = [ctypes.c_void_p]
        self._free.restype = None
        self._peak = ctypes.c_int64.in_dll(library, "pdg_bytes_peak")
        self._live = ctypes.c_int64.in_dll(library, "pdg_bytes_live")
        self.step = ctypes.c_int64.in_dll(library, "pdg_step")
        self.peak_bytes = 0
        ranks = [len(o["shape"]) for o in abi["outputs"]] + [1] * len(abi["lengths"])
        fields = [(f"r{i}", descriptor_type(r)) for i, r in enumerate(ranks)]
        self.results_type = type("Results", (ctypes.Structure,), {"_fields_": fields})

    def __call__(
        self,
        inputs: Mapping[str, np.ndarray],
        symbols: Mapping[str, int],
        udfs: Mapping[str, Callable] | None = None,
    ) -> tuple[dict, dict]:
        """(outputs by name, dynamic bounds by symbol). Inputs must already
        have the manifest's dtypes and shapes and `udfs` every callback the
        program names (the loader checks them). A failing udf ends the run
        early; its error is raised (UdfError) after every buffer is freed."""
        keep = []
        args: list = []
        for spec in self.abi["inputs"]:
            array = np.ascontiguousarray(inputs[spec["name"]], dtype=ELEMENTS[spec["element"]])
            if spec["element"] == "i1":
                array = array.view(np.int8)
            keep.append(array)
            args.append(ctypes.pointer(to_descriptor(array)))
        args += [ctypes.c_int64(int(symbols[name])) for name in self.abi["symbols"]]
        results = self.results_type()
        table = UdfTable(self.library, self.abi.get("udfs", []), udfs or {})
        self._peak.value = self._live.value = 0
        with table:
            self.fn(ctypes.pointer(results), *args)
        self.peak_bytes = int(self._peak.value)
        n = len(self.abi["outputs"])
        descriptors = [getattr(results, f) for f, _ in self.results_type._fields_]
        try:
            bounds: dict[str, np.ndarray | int] = {}
            lengths: dict[str, tuple[list[str], np.ndarray]] = {}
            for spec, d in zip(self.abi["lengths"], descriptors[n:], strict=True):
                per_group = to_array(d, 1, "i64")
                if len(spec["groups"]) > 1:  # row-major over the group dims
                    shape = [int(e) if e.isdigit() else int(symbols[e]) for e in spec["extents"]]
                    per_group = per_group.reshape(shape)
                lengths[spec["dim"]] = (spec["groups"], per_group)
                bound = per_group if spec["groups"] else int(per_group[0])
                bounds[spec["symbol"] or spec["dim"]] = bound
            # Views of the compiled stores, cut to the steps that ran, then
            # copied once (the stores may hold spare capacity).
            outputs = {
                spec["name"]: _trim(
                    view_array(d, len(spec["shape"]), spec["element"]), spec["domain"], lengths
                )
                for spec, d in zip(self.abi["outputs"], descriptors[:n], strict=True)
            }
        finally:
            for d in descriptors:
                self._free(d.allocated)
        if table.failure is not None:
            spec, error, point = table.failure
            at = ", ".join(f"{d}={c}" for d, c in zip(spec["domain"], point, strict=True))
            what = (
                str(error)
                if isinstance(error, UdfFailure)
                else f"udf '{spec['name']}' raised {type(error).__name__}: {error}"
            )
            raise UdfError(
                f"{what} (computing '{spec['value']}' at {at or 'its only point'})"
            ) from error
        return outputs, bounds


def _trim(array: np.ndarray, domain: list[str], lengths: dict) -> np.ndarray | list:
    """A copy of an output's store cut to the steps each sequence ran: one
    array when the lengths agree, else a list with one array per sequence."""

    def cut(a: np.ndarray, axis: int, n: int) -> np.ndarray:
        return a[(slice(None),) * axis + (slice(0, n),)]

    for axis, d in enumerate(domain):
        if d not in lengths:
            continue
        groups, per_group = lengths[d]
        if not groups or len(groups) != 1 or groups[0] not in domain:
            array = cut(array, axis, int(per_group.max()) if len(per_group) else 0)
            continue
        if len(set(per_group.tolist())) <= 1:
            array = cut(array, axis, int(per_group[0]) if len(per_group) else 0)
            continue
        g = domain.index(groups[0])
        inner = axis - (1 if g < axis else 0)  # the step axis once the group axis is taken
        return [
            cut(array[(slice(None),) * g + (k,)], inner, n).copy()
            for k, n in enumerate(per_group.tolist())
        ]
    return array.copy()
