"""Calling a compiled program's entry on the CPU with ctypes: NumPy inputs
become memref descriptors, the results come back as NumPy arrays (ragged
per sequence where sequences ended at different steps) that view the
buffers the compiled code allocated, without a copy; each buffer is freed
when the last array viewing it goes. Needs only NumPy and the standard
library.

The run state lives in pdg's C runtime (pdg/runtime.h): `pdg_begin_run`
resets it, the entry polls `pdg_abort` at every step, and after the call
the reason it stopped (a failed udf, SIGINT, memory, an index out of range)
becomes an exception here, after every buffer is freed."""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Callable, Collection, Mapping

import numpy as np

from .memref import ELEMENTS, descriptor_type, to_array, to_descriptor
from .udfs import UdfFailure, UdfTable

# pdg/runtime.h
RUNTIME_VERSION = 2
STOP_UDF, STOP_INTERRUPT, STOP_MEMORY, STOP_INDEX, STOP_COLLECTIVE, STOP_ENDED = 1, 2, 3, 4, 5, 6
FAULT_COORDS = 8


class Fault(ctypes.Structure):
    _fields_ = [
        ("site", ctypes.c_int64),
        ("value", ctypes.c_int64),
        ("bound", ctypes.c_int64),
        ("ncoords", ctypes.c_int64),
        ("coords", ctypes.c_int64 * FAULT_COORDS),
    ]


class UdfError(Exception):
    """A udf failed during a run; the run ended early and freed its memory."""


class StoppedError(Exception):
    """The compiled code stopped the run: an index out of range, or memory."""


class Entry:
    """The entry function of a loaded library, described by `abi` (the
    manifest's JSON form of pdg.lowering.driver.EntryABI)."""

    def __init__(self, library: ctypes.CDLL, abi: dict, description: dict):
        self.abi = abi
        self.description = description
        self.library = library
        self.fn = getattr(library, f"_mlir_ciface_{abi['entry']}")
        self.fn.restype = None
        self._free = library._mlir_memref_to_llvm_free
        self._free.argtypes = [ctypes.c_void_p]
        self._free.restype = None
        # Freeing a result after its run: not counted in a later run's bytes.
        self._free_result = library.pdg_free_result
        self._free_result.argtypes = [ctypes.c_void_p]
        self._free_result.restype = None
        self._begin = library.pdg_begin_run
        self._begin.argtypes = [ctypes.c_int64, ctypes.c_int64]
        self._begin.restype = None
        self._catch = library.pdg_catch_interrupts
        self._catch.restype = ctypes.c_int
        self._release = library.pdg_release_interrupts
        self._release.restype = None
        self._peak = ctypes.c_int64.in_dll(library, "pdg_bytes_peak")
        self._abort = ctypes.c_int8.in_dll(library, "pdg_abort")
        self._fault = Fault.in_dll(library, "pdg_fault")
        self.step = ctypes.c_int64.in_dll(library, "pdg_step")
        self.peak_bytes = 0
        ranks = [len(o["shape"]) for o in abi["outputs"]] + [1] * len(abi["lengths"])
        fields = [(f"r{i}", descriptor_type(r)) for i, r in enumerate(ranks)]
        self.results_type = type("Results", (ctypes.Structure,), {"_fields_": fields})

    def interrupt(self) -> None:
        """Stops the run in progress (from another thread) within a step."""
        self.library.pdg_stop(ctypes.c_int8(STOP_INTERRUPT))

    def __call__(
        self,
        inputs: Mapping[str, np.ndarray],
        symbols: Mapping[str, int],
        udfs: Mapping[str, Callable] | None = None,
        memory_limit: int = 0,
        donate: Collection[str] = (),
    ) -> tuple[dict, dict]:
        """(outputs by name, dynamic bounds by symbol). Inputs must already
        have the manifest's dtypes and shapes and `udfs` every callback the
        program names (the loader checks them). `memory_limit`: bytes the
        run may hold, its inputs included (0: no limit); `peak_bytes` then
        counts the inputs too. `donate`: inputs whose arrays the compiled
        code may write into (see donated_arrays). A run that stops early
        raises after every buffer is freed: UdfError, StoppedError, or
        KeyboardInterrupt on SIGINT."""
        keep = []
        args: list = []
        for spec in self.abi["inputs"]:
            array = np.ascontiguousarray(inputs[spec["name"]], dtype=ELEMENTS[spec["element"]])
            if spec["element"] == "i1":
                array = array.view(np.int8)
            keep.append(array)
        written = donated_arrays(self.abi, keep, inputs, donate)
        for k, array in written.items():
            keep[k] = array
        args += [ctypes.pointer(to_descriptor(array)) for array in keep]
        inputs_at = {a.ctypes.data: a for a in written.values()}  # outputs may view these
        args += [ctypes.c_int64(int(symbols[name])) for name in self.abi["symbols"]]
        results = self.results_type()
        table = UdfTable(self.library, self.abi.get("udfs", []), udfs or {})
        inputs_bytes = sum(a.nbytes for a in keep)
        self._begin(ctypes.c_int64(memory_limit), ctypes.c_int64(inputs_bytes))
        # SIGINT stops the run at the next step, where Python's own handler
        # would wait for the whole call to return. Only in place of Python's
        # default handler: a handler of the caller's is left alone.
        catching = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        catching = catching and self._catch() == 0
        try:
            with table:
                self.fn(ctypes.pointer(results), *args)
        finally:
            if catching:
                self._release()
        self.peak_bytes = int(self._peak.value)
        n = len(self.abi["outputs"])
        descriptors = [getattr(results, f) for f, _ in self.results_type._fields_]
        reason = int(self._abort.value)
        if reason:
            for d in descriptors:
                if d.allocated not in inputs_at:  # an input's array is not ours to free
                    self._free(d.allocated)
            self._raise_stop(reason, table)
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
        finally:
            for d in descriptors[n:]:
                self._free(d.allocated)
        # Outputs naming one value share its buffer: one owner frees it once.
        # An output in an input's buffer (donated) is owned by that array.
        owners: dict[int, _Buffer | np.ndarray] = dict(inputs_at)
        outputs = {
            spec["name"]: _trim(
                self._owned(d, len(spec["shape"]), spec["element"], owners),
                spec["domain"],
                lengths,
            )
            for spec, d in zip(self.abi["outputs"], descriptors[:n], strict=True)
        }
        return outputs, bounds

    def _owned(
        self, d, rank: int, element: str, owners: dict[int, _Buffer | np.ndarray]
    ) -> np.ndarray:
        """An array viewing the buffer of descriptor `d`, which it owns with
        the other arrays of `owners` viewing it: the buffer is freed when
        the last of them goes."""
        dtype = np.dtype(ELEMENTS[element])
        sizes = tuple(d.sizes[i] for i in range(rank))
        if d.allocated not in owners:
            owners[d.allocated] = _Buffer(self._free_result, d.allocated)
        if 0 in sizes:  # freed with `owners` unless another output views it
            return np.zeros(sizes, dtype)
        owner = _ViewOf(owners[d.allocated])
        owner.__array_interface__ = {
            "version": 3,
            "shape": sizes,
            "strides": tuple(d.strides[i] * dtype.itemsize for i in range(rank)),
            "typestr": dtype.str,
            "data": (d.aligned + d.offset * dtype.itemsize, False),
        }
        return np.asarray(owner)

    def _raise_stop(self, reason: int, table: UdfTable) -> None:
        if reason == STOP_INTERRUPT:
            raise KeyboardInterrupt
        if reason == STOP_UDF and table.failure is not None:
            spec, error, point = table.failure
            at = ", ".join(f"{d}={c}" for d, c in zip(spec["domain"], point, strict=True))
            if isinstance(error, KeyboardInterrupt):
                raise KeyboardInterrupt
            what = (
                str(error)
                if isinstance(error, UdfFailure)
                else f"udf '{spec['name']}' raised {type(error).__name__}: {error}"
            )
            raise UdfError(
                f"{what} (computing '{spec['value']}' at {at or 'its only point'})"
            ) from error
        fault = self._fault
        if reason == STOP_INDEX:
            raise StoppedError(self._index_message(fault))
        if reason == STOP_MEMORY:
            raise StoppedError(self._memory_message(fault))
        if reason == STOP_COLLECTIVE:
            raise StoppedError(self._collective_message(fault))
        if reason == STOP_ENDED:
            raise StoppedError(self._ended_message(fault))
        raise StoppedError(f"the compiled run stopped (reason {reason})")

    def _index_message(self, fault: Fault) -> str:
        checks = self.description.get("index_checks", [])
        site = checks[fault.site] if 0 <= fault.site < len(checks) else None
        if site is None:
            where, at = "a node", ""
        else:
            where = f"'{site['value']}'" + (f" ({site['location']})" if site["location"] else "")
            coords = [fault.coords[i] for i in range(min(fault.ncoords, FAULT_COORDS))]
            at = ", ".join(f"{d}={c}" for d, c in zip(site["domain"], coords, strict=False))
            at = f" at {at}" if at else ""
        return (
            f"index {fault.value} is out of range 0..{fault.bound - 1} in {where}{at}; the "
            "data it reads (token ids, positions, labels) must lie inside the table"
        )

    def _ended_message(self, fault: Fault) -> str:
        sites = self.abi.get("ended_reads", [])
        site = sites[fault.site] if 0 <= fault.site < len(sites) else None
        if site is None:
            return f"a node read step {fault.value} of a sequence that ended after {fault.bound}"
        coords = [fault.coords[i] for i in range(min(fault.ncoords, FAULT_COORDS))]
        sequence = ", ".join(f"{d}={c}" for d, c in zip(site["groups"], coords, strict=False))
        where = f" ({site['location']})" if site["location"] else ""
        return (
            f"'{site['consumer']}'{where} reads '{site['producer']}' at step {fault.value} "
            f"along '{site['dim']}', but dim '{site['dim']}' ended after {fault.bound} steps "
            f"for ({sequence}); read only the sequences still running at that step (guard the "
            f"case with a condition or clamp the step), as the interpreter requires"
        )

    def _collective_message(self, fault: Fault) -> str:
        sites = self.abi.get("collectives", [])
        site = sites[fault.site] if 0 <= fault.site < len(sites) else None
        where = (
            f"{site['op']} '{site['value']}' over '{site['over']}' ({site['location']})"
            if site
            else "a collective"
        )
        if fault.bound == -1:
            return f"{where} failed: MPI returned error code {fault.value}"
        if fault.bound == 2**31 - 1:
            return f"{where} moves {fault.value} elements at once; MPI counts take at most 2^31 - 1"
        if site is None or site["op"] == "broadcast":
            return (
                f"{where} broadcasts from rank {fault.value}, but the run has {fault.bound} "
                "rank(s); broadcast from a lower rank"
            )
        return (
            f"{where} has {fault.value} blocks of ranks, but the run has {fault.bound} "
            "rank(s); the leading dim must be the world's size W"
        )

    def _memory_message(self, fault: Fault) -> str:
        stores = self.abi.get("grow_stores", [])
        bytes_ = f"{fault.value} bytes ({fault.value / 2**20:.1f} MiB)"
        why = (
            f"that passes the run's memory limit of {fault.bound} bytes"
            if fault.bound > 0
            else "out of memory"
        )
        if 0 <= fault.site < len(stores):
            s = stores[fault.site]
            dim = s["dim"]
            bounded = any(
                x["dim"] == dim and x["max"] is not None for x in self.description["symbols"]
            )
            hint = (
                "raise the limit or lower the dim's max"
                if bounded
                else f"dim '{dim}' has no max: give it one, or check what ends its sequences"
            )
            return (
                f"the store of '{s['value']}' could not grow along dynamic dim '{dim}' to "
                f"{bytes_}: {why}; {hint}"
            )
        if fault.site == -2:
            return (
                f"the node bodies' temporaries took the run to {bytes_} live: {why}; raise the "
                "limit (the planned stores leave too little room for them)"
            )
        return (
            f"the program's stores could not be allocated (asking for {bytes_}): {why}; run "
            "with smaller symbol values"
        )


class _Buffer:
    """A buffer the compiled code allocated, which arrays now view; freed
    when the last of them goes."""

    def __init__(self, free: Callable, allocated: int):
        self._free = free
        self._allocated = allocated

    def __del__(self) -> None:
        self._free(self._allocated)


class _ViewOf:
    """The base of one output's array: its shape and strides over a
    `_Buffer` (several outputs may view one buffer), or over an input's
    array the compiled code wrote into (donated_arrays)."""

    def __init__(self, buffer: _Buffer | np.ndarray):
        self._buffer = buffer


def donated_arrays(
    abi: dict, arrays: list[np.ndarray], given: Mapping, donate: Collection[str]
) -> dict[int, np.ndarray]:
    """The arrays to pass for the inputs whose buffer the compiled code
    writes into (`abi.donated`: a store updated in place starting from
    the input, pdg.lowering.updated_in_place), by input position. The
    caller's own array where the caller donates it and it can be written
    as it is (of the dtype and layout the program takes, writeable,
    sharing no memory with another input); otherwise a copy, so the
    caller's arrays never change. A donated array holds the
    store after the run: it is not the caller's input any more (an output
    returning that store is a view of it)."""
    names = [spec["name"] for spec in abi["inputs"]]
    written = {names.index(d["input"]) for d in abi.get("donated", [])}
    if not written:
        return {}
    # The memory each input spans: a donated array overlapping another
    # input's is copied (two inputs given the same array, or the
    # reference weights given as the policy's).
    spans = sorted(
        (a.ctypes.data, a.ctypes.data + a.nbytes, k) for k, a in enumerate(arrays) if a.nbytes
    )
    shared = set()
    end, last = -1, None
    for start, stop, k in spans:
        if start < end:
            shared |= {k, last}
        if stop > end:
            end, last = stop, k
    out = {}
    for k in sorted(written):
        array = arrays[k]
        # Converting (a dtype, a layout) made a private array already.
        private = not np.may_share_memory(array, given[names[k]])
        usable = array.flags.writeable and k not in shared and (private or names[k] in donate)
        out[k] = array if usable else array.copy()
    return out


def _trim(array: np.ndarray, domain: list[str], lengths: dict) -> np.ndarray | list:
    """An output's store cut to the steps each sequence ran (views, no
    copy): one array when the lengths agree, else a list with one array per
    sequence."""

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
            cut(array[(slice(None),) * g + (k,)], inner, n)
            for k, n in enumerate(per_group.tolist())
        ]
    return array
