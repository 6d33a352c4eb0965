"""The runtime's collectives (runtime/lib/mpi.c) on their own, through
ctypes, unbound (a world of one rank, no MPI): strided views in and out,
the faults a run stops with, and binding refused for a library that is
not MPI. On several ranks: test/mpi/ and test/python/runtime/test_mpi_failures.py."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest
from pdg.lowering.toolchain import c_runtime, linker

HERE = Path(__file__).resolve().parent
STOP_COLLECTIVE = 5
SUM, MAX, BROADCAST = 0, 1, 2
F32, F64 = 0, 1


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    archive, include = c_runtime()
    out = tmp_path_factory.mktemp("mpi") / "libtest.so"
    subprocess.run(
        [linker(), "-shared", "-fPIC", "-O1", f"-I{include}", "-o", str(out),
         str(HERE / "driver.c"), "-Wl,--whole-archive", str(archive), "-Wl,--no-whole-archive",
         "-lpthread", "-ldl"],
        check=True,
    )  # fmt: skip
    lib = ctypes.CDLL(str(out))
    lib.pdg_begin_run.argtypes = [ctypes.c_int64, ctypes.c_int64]
    lib.pdg_mpi_bind.restype = ctypes.c_int32
    lib.pdg_mpi_bind.argtypes = [ctypes.c_char_p, ctypes.c_ssize_t, ctypes.c_int64,
                                 ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]  # fmt: skip
    return lib


def descriptor(view: np.ndarray):
    """MLIR's strided memref descriptor of a NumPy view (strides in elements)."""
    rank = view.ndim
    fields = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
        ("sizes", ctypes.c_int64 * rank),
        ("strides", ctypes.c_int64 * rank),
    ]
    d = type("Descriptor", (ctypes.Structure,), {"_fields_": fields})()
    base = view.__array_interface__["data"][0]
    d.allocated = d.aligned = base
    d.offset = 0
    for i in range(rank):
        d.sizes[i] = view.shape[i]
        d.strides[i] = view.strides[i] // view.itemsize
    return d


def collective(rt, rank: int, source, target, op: int, element: int, root: int = 0):
    entry = getattr(rt, f"_mlir_ciface_pdg_collective_{rank}")
    entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32,
                      ctypes.c_int64, ctypes.c_int64]  # fmt: skip
    entry(ctypes.byref(source), ctypes.byref(target), op, element, root, 7)


def stop_reason(rt) -> int:
    return ctypes.c_int8.in_dll(rt, "pdg_abort").value


def test_a_world_of_one_copies_between_strided_views(rt):
    """A transposed view in, every other column of a wider array out: both
    go through the dense scratch the MPI calls need."""
    rt.pdg_begin_run(0, 0)
    src = np.arange(12, dtype=np.float32).reshape(3, 4).T  # (4, 3), not contiguous
    out = np.zeros((4, 6), np.float32)
    dst = out[:, ::2]
    collective(rt, 2, descriptor(src), descriptor(dst), SUM, F32)
    assert stop_reason(rt) == 0
    np.testing.assert_array_equal(out[:, ::2], src)
    np.testing.assert_array_equal(out[:, 1::2], 0)


def test_a_world_of_one_copies_a_scalar_and_dense_points(rt):
    rt.pdg_begin_run(0, 0)
    src, dst = np.array(2.5), np.zeros(())
    collective(rt, 0, descriptor(src), descriptor(dst), MAX, F64)
    assert float(dst) == 2.5
    src, dst = np.arange(5, dtype=np.float64), np.zeros(5)
    collective(rt, 1, descriptor(src), descriptor(dst), BROADCAST, F64)
    np.testing.assert_array_equal(dst, src)
    assert ctypes.c_int64.in_dll(rt, "pdg_collective_calls").value >= 2


def test_a_broadcast_from_a_rank_past_the_world_stops_the_run(rt):
    rt.pdg_begin_run(0, 0)
    src, dst = np.ones(3, np.float32), np.zeros(3, np.float32)
    collective(rt, 1, descriptor(src), descriptor(dst), BROADCAST, F32, root=1)
    assert stop_reason(rt) == STOP_COLLECTIVE
    site, value, bound = list((ctypes.c_int64 * 3).in_dll(rt, "pdg_fault"))
    assert (site, value, bound) == (7, 1, 1)  # call site 7, root 1, a world of 1
    np.testing.assert_array_equal(dst, 0)
    rt.pdg_begin_run(0, 0)


def test_binding_refuses_a_library_that_is_not_mpi(rt, tmp_path):
    handles = (ctypes.c_ssize_t * 4)()
    assert rt.pdg_mpi_bind(b"/nonexistent/libmpi.so", 0, 0, 1, handles, handles) == 1
    assert rt.pdg_mpi_bind(b"libc.so.6", 0, 0, 1, handles, handles) == 2
    assert rt.pdg_world_rank() == 0 and rt.pdg_world_size() == 1
