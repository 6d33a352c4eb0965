"""pdg's C runtime on its own (runtime/include/pdg/runtime.h), through
ctypes: a test library is linked from runtime/test/driver.c and the
installed libpdg_runtime.a, the way `pdg compile` links a program.so."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pdg.lowering.toolchain import c_runtime, linker

HERE = Path(__file__).resolve().parent
STOP_INTERRUPT, STOP_MEMORY, STOP_INDEX, STOP_ENDED = 2, 3, 4, 6


@pytest.fixture(scope="module")
def library_path(tmp_path_factory) -> Path:
    archive, include = c_runtime()
    out = tmp_path_factory.mktemp("runtime") / "libtest.so"
    subprocess.run(
        [linker(), "-shared", "-fPIC", "-O1", f"-I{include}", "-o", str(out),
         str(HERE / "driver.c"), "-Wl,--whole-archive", str(archive), "-Wl,--no-whole-archive",
         "-lpthread"],
        check=True,
    )  # fmt: skip
    return out


@pytest.fixture
def rt(library_path):
    lib = ctypes.CDLL(str(library_path))
    lib._mlir_memref_to_llvm_aligned_alloc.restype = ctypes.c_void_p
    lib._mlir_memref_to_llvm_aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    lib._mlir_memref_to_llvm_free.argtypes = [ctypes.c_void_p]
    lib.pdg_free_result.argtypes = [ctypes.c_void_p]
    lib.pdg_begin_run.argtypes = [ctypes.c_int64, ctypes.c_int64]
    lib.pdg_grow.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 5
    lib.pdg_index_fault.argtypes = [ctypes.c_int64] * 12
    lib.pdg_ended_fault.argtypes = [ctypes.c_int64] * 12
    lib.pdg_grow_start.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
    lib.pdg_grow_start.restype = ctypes.c_int64
    lib.pdg_grow_reached.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    lib.pdg_begin_run(0, 0)
    return lib


def value(lib, name: str, ctype=ctypes.c_int64) -> int:
    return ctype.in_dll(lib, name).value


def fault(lib) -> list[int]:
    return list((ctypes.c_int64 * 12).in_dll(lib, "pdg_fault"))


def test_allocations_are_counted_aligned_and_freed(rt):
    a = rt._mlir_memref_to_llvm_aligned_alloc(64, 1000)
    b = rt._mlir_memref_to_llvm_aligned_alloc(64, 200_000)
    assert a % 64 == 0 and b % 64 == 0
    assert value(rt, "pdg_bytes_live") == 201_000 == value(rt, "pdg_bytes_peak")
    rt._mlir_memref_to_llvm_free(a)
    assert value(rt, "pdg_bytes_live") == 200_000
    rt._mlir_memref_to_llvm_free(b)  # large: kept for the next block of its size
    assert value(rt, "pdg_bytes_live") == 0
    c = rt._mlir_memref_to_llvm_aligned_alloc(64, 200_000)
    assert c == b  # the kept block
    rt.pdg_begin_run(0, 0)  # the next run counts from zero ...
    rt.pdg_free_result(c)  # ... and a result of the last one freed now is not counted
    assert value(rt, "pdg_bytes_live") == 0 == value(rt, "pdg_bytes_peak")


def fresh_runtime(library_path: Path, tmp_path: Path) -> ctypes.CDLL:
    """The test library under another name: its own allocator state."""
    fresh = tmp_path / "libfresh.so"
    fresh.write_bytes(library_path.read_bytes())
    lib = ctypes.CDLL(str(fresh))
    lib._mlir_memref_to_llvm_aligned_alloc.restype = ctypes.c_void_p
    lib._mlir_memref_to_llvm_aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    lib._mlir_memref_to_llvm_free.argtypes = [ctypes.c_void_p]
    lib.pdg_begin_run.argtypes = [ctypes.c_int64, ctypes.c_int64]
    lib.pdg_grow.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 5
    return lib


def test_a_run_of_other_sizes_keeps_reusing_the_blocks_it_shares(library_path, tmp_path):
    """A miss releases the least recently kept blocks, only as many as the
    new block needs to stay under the highest peak; the rest are reused.
    (Before, a miss released every kept block: a GRPO run after a warm-up
    of fewer iterations faulted in 600 MiB of fresh pages.)"""
    lib = fresh_runtime(library_path, tmp_path)
    mib = 1 << 20

    def alloc(size):
        return lib._mlir_memref_to_llvm_aligned_alloc(64, size)

    lib.pdg_begin_run(0, 0)  # run 1: three stores live together
    a, b, c = alloc(mib), alloc(2 * mib), alloc(mib // 2)
    for block in (a, b, c):  # kept in this order: a is the least recent
        lib._mlir_memref_to_llvm_free(block)
    assert value(lib, "pdg_bytes_kept") == 3 * mib + mib // 2
    lib.pdg_begin_run(0, 0)  # run 2: a size run 1 did not have comes first
    d = alloc(mib // 4)
    # 1/4 MiB live beside 3 1/2 MiB kept would pass the 3 1/2 MiB peak:
    # only `a` goes.
    assert value(lib, "pdg_bytes_kept") == 2 * mib + mib // 2
    assert alloc(2 * mib) == b and alloc(mib // 2) == c
    assert value(lib, "pdg_bytes_kept") == 0
    assert value(lib, "pdg_bytes_live") == 2 * mib + mib // 2 + mib // 4
    for block in (d, b, c):
        lib._mlir_memref_to_llvm_free(block)
    lib.pdg_release_cache()
    assert value(lib, "pdg_bytes_kept") == 0


def test_a_store_that_grows_releases_only_the_kept_blocks_its_new_bytes_need(
    library_path, tmp_path
):
    """(Before, growing released every kept block: a GRPO call that grew
    its stores faulted in the pages of every temporary again.)"""
    lib = fresh_runtime(library_path, tmp_path)
    mib = 1 << 20
    lib.pdg_begin_run(0, 0)
    rows, cols = 64, 512  # int64: 1/4 MiB
    data = lib._mlir_memref_to_llvm_aligned_alloc(64, rows * cols * 8)
    old = (ctypes.c_int64 * 7)(data, data, 0, rows, cols, cols, 1)
    out = (ctypes.c_int64 * 7)()
    a, b = (lib._mlir_memref_to_llvm_aligned_alloc(64, mib) for _ in range(2))
    for block in (a, b):  # a is the least recently kept
        lib._mlir_memref_to_llvm_free(block)
    assert value(lib, "pdg_bytes_kept") == 2 * mib
    lib.pdg_grow(out, old, 2, 1, 2 * cols, 8, 0)  # 1/4 MiB more
    assert value(lib, "pdg_abort", ctypes.c_int8) == 0
    # 1/2 MiB live beside 2 MiB kept would pass the 2 1/4 MiB peak: only `a` goes.
    assert value(lib, "pdg_bytes_kept") == mib
    assert value(lib, "pdg_bytes_peak") == 2 * mib + mib // 4
    assert lib._mlir_memref_to_llvm_aligned_alloc(64, mib) == b


def test_a_store_past_the_limit_before_the_run_stops_the_run(rt):
    rt.pdg_begin_run(10_000, 0)
    ok = rt._mlir_memref_to_llvm_aligned_alloc(64, 4_000)
    stand_in = rt._mlir_memref_to_llvm_aligned_alloc(64, 8_000)
    assert value(rt, "pdg_abort", ctypes.c_int8) == STOP_MEMORY
    assert fault(rt)[:3] == [-1, 8_000, 10_000]  # no store number, bytes, the limit
    assert value(rt, "pdg_bytes_live") == 4_000  # the stand-in is not counted
    rt._mlir_memref_to_llvm_free(stand_in)  # ignored
    rt._mlir_memref_to_llvm_free(ok)
    assert value(rt, "pdg_bytes_live") == 0


def test_an_impossible_allocation_before_the_run_stops_the_run(rt):
    stand_in = rt._mlir_memref_to_llvm_aligned_alloc(64, 1 << 62)
    assert stand_in and value(rt, "pdg_abort", ctypes.c_int8) == STOP_MEMORY
    assert fault(rt)[1] == 1 << 62
    rt._mlir_memref_to_llvm_free(stand_in)


def descriptor(rt, rows: int, cols: int) -> tuple[ctypes.Array, ctypes.Array]:
    """A rows x cols int64 store (rank 2, identity layout) holding r*100+c."""
    data = rt._mlir_memref_to_llvm_aligned_alloc(64, rows * cols * 8)
    values = (ctypes.c_int64 * (rows * cols)).from_address(data)
    for r in range(rows):
        for c in range(cols):
            values[r * cols + c] = r * 100 + c
    d = (ctypes.c_int64 * 7)(data, data, 0, rows, cols, cols, 1)
    return d, (ctypes.c_int64 * 7)()


def test_a_store_grows_in_place_keeping_each_row(rt):
    old, out = descriptor(rt, 3, 4)
    rt.pdg_grow(out, old, 2, 1, 10, 8, 0)
    assert value(rt, "pdg_abort", ctypes.c_int8) == 0
    assert list(out)[2:] == [0, 3, 10, 10, 1]
    grown = (ctypes.c_int64 * 30).from_address(out[1])
    assert [[grown[r * 10 + c] for c in range(4)] for r in range(3)] == [
        [r * 100 + c for c in range(4)] for r in range(3)
    ]
    assert value(rt, "pdg_bytes_live") == 3 * 10 * 8
    rt._mlir_memref_to_llvm_free(out[0])


def test_growth_is_counted_and_remembered_for_the_next_call(rt):
    grows = value(rt, "pdg_grows")
    old, out = descriptor(rt, 3, 4)
    rt.pdg_grow(out, old, 2, 1, 10, 8, 0)
    assert value(rt, "pdg_grows") == grows + 1
    rt._mlir_memref_to_llvm_free(out[0])
    reached = ctypes.c_int64(0)
    assert rt.pdg_grow_start(ctypes.byref(reached), 16, 80) == 16  # nothing reached yet
    rt.pdg_grow_reached(ctypes.byref(reached), 40)
    rt.pdg_grow_reached(ctypes.byref(reached), 24)  # the most is kept
    assert reached.value == 40
    assert rt.pdg_grow_start(ctypes.byref(reached), 16, 80) == 40
    assert rt.pdg_grow_start(ctypes.byref(reached), 64, 80) == 64  # never fewer than asked
    # Past the limit, or a size that overflows: the first steps asked for.
    rt.pdg_begin_run(40 * 80 - 1, 0)
    assert rt.pdg_grow_start(ctypes.byref(reached), 16, 80) == 16
    rt.pdg_begin_run(40 * 80, 0)
    assert rt.pdg_grow_start(ctypes.byref(reached), 16, 80) == 40
    assert rt.pdg_grow_start(ctypes.byref(reached), 16, 1 << 60) == 16
    assert rt.pdg_grow_start(ctypes.byref(reached), 16, -1) == 16


@pytest.mark.parametrize(
    "cap, limit, bytes_asked", [(1000, 4096, 3 * 1000 * 8), (1 << 61, 0, None)]
)
def test_a_store_that_cannot_grow_stops_the_run_and_stays_whole(rt, cap, limit, bytes_asked):
    rt.pdg_begin_run(limit, 0)
    old, out = descriptor(rt, 3, 4)
    rt.pdg_grow(out, old, 2, 1, cap, 8, 7)
    assert value(rt, "pdg_abort", ctypes.c_int8) == STOP_MEMORY
    assert list(out) == list(old)  # the buffer as it was, still valid
    site, asked, bound = fault(rt)[:3]
    assert site == 7 and bound == limit
    assert asked == (bytes_asked if bytes_asked is not None else (1 << 63) - 1)
    rt._mlir_memref_to_llvm_free(out[0])


def test_the_first_index_fault_is_kept_with_its_point(rt):
    rt.pdg_index_fault(3, 99999, 64, 2, 1, 5, 0, 0, 0, 0, 0, 0)
    rt.pdg_index_fault(4, -1, 64, 1, 9, 0, 0, 0, 0, 0, 0, 0)
    assert value(rt, "pdg_abort", ctypes.c_int8) == STOP_INDEX
    assert fault(rt)[:6] == [3, 99999, 64, 2, 1, 5]


def test_an_ended_sequence_fault_stops_the_run_and_the_first_is_kept(rt):
    rt.pdg_ended_fault(2, 5, 3, 2, 1, 4, 0, 0, 0, 0, 0, 0)  # step 5 of a sequence of 3
    rt.pdg_index_fault(4, -1, 64, 1, 9, 0, 0, 0, 0, 0, 0, 0)
    assert value(rt, "pdg_abort", ctypes.c_int8) == STOP_ENDED
    assert fault(rt)[:6] == [2, 5, 3, 2, 1, 4]


def test_sigint_stops_the_run_and_the_previous_handler_comes_back(rt):
    assert rt.pdg_catch_interrupts() == 0
    os.kill(os.getpid(), signal.SIGINT)  # caught in C: no KeyboardInterrupt here
    assert value(rt, "pdg_abort", ctypes.c_int8) == STOP_INTERRUPT
    rt.pdg_release_interrupts()
    with pytest.raises(KeyboardInterrupt):  # Python's handler again
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


POOL = """
import ctypes, os, resource, sys, time
lib = ctypes.CDLL(sys.argv[1])
n = 1000
hits, after = (ctypes.c_int64 * n)(), (ctypes.c_int64 * n)()
lib.pdg_test_loops.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
assert lib.pdg_thread_slots() == int(os.environ["PDG_NUM_THREADS"])
assert lib.pdg_test_loops(2000, n, hits, after) == 0
# Done with loops: the workers go to sleep instead of polling.
time.sleep(0.3)
before = resource.getrusage(resource.RUSAGE_SELF)
time.sleep(1.0)
now = resource.getrusage(resource.RUSAGE_SELF)
busy = (now.ru_utime + now.ru_stime) - (before.ru_utime + before.ru_stime)
print(f"cpu seconds while idle: {busy:.3f}")
assert busy < 0.2, busy
if os.fork() == 0:  # a child starts its own pool
    os._exit(lib.pdg_test_loops(50, n, hits, after))
assert os.wait()[1] == 0
"""


def test_a_run_forgets_the_points_a_stopped_loop_noted(rt):
    """A run stopped inside a driver's loop (a fault) never left it: the
    next run starts with no points noted, so its bodies outside every loop
    split as they would have (not known: -1)."""
    rt.pdg_loop_enter.argtypes = [ctypes.c_int64]
    rt.pdg_loop_enter.restype = ctypes.c_int64
    rt.pdg_loop_enter(8)
    assert rt.pdg_ops_split() == 0  # 8 points: whole
    rt.pdg_begin_run(0, 0)
    assert rt.pdg_ops_split() == 1
    assert rt.pdg_loop_enter(-1) == -1


def run_on_threads(script: str, library_path, threads: int, timeout: int):
    """`script` run in a fresh Python (the pool reads PDG_NUM_THREADS once
    per process) on `threads` threads, with the library's path as argv[1]."""
    env = {**os.environ, "PDG_NUM_THREADS": str(threads)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), str(library_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


LOOP_POINTS = """
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
n = 64
split, thread = (ctypes.c_int32 * n)(), (ctypes.c_int64 * n)()
lib.pdg_test_loop_points.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 2
threads = int(os.environ["PDG_NUM_THREADS"])
assert lib.pdg_ops_split() == 1  # outside any loop: not known, split
for points, want in ((1, 1), (2, 0), (8, 0), (-1, 1)):
    assert lib.pdg_test_loop_points(points, n, split, thread) == -1  # restored after
    assert list(split) == [want] * n, (points, list(split))
    assert len(set(thread)) == threads  # every thread ran some, and saw the points
assert lib.pdg_fork_from() == min(threads, 2)
"""


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_the_bodies_of_a_loop_know_its_points(library_path, threads):
    """pdg_loop_enter notes a driver loop's points on the caller, the pool
    hands them to the workers, and pdg_ops_split answers the same on every
    thread: tiles below 2 points (or where not known), whole ops from 2,
    whatever the thread count. A loop forks from min(threads, 2) points."""
    done = run_on_threads(LOOP_POINTS, library_path, threads, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("threads", [1, 2, 3, 16])
def test_the_pool_runs_every_iteration_once_and_sleeps_when_idle(library_path, threads):
    """Oversubscribed too (16 threads on however many cores): waits sleep
    instead of spinning, so it neither hangs nor keeps the cores busy."""
    done = run_on_threads(POOL, library_path, threads, timeout=300)
    assert done.returncode == 0, done.stderr
