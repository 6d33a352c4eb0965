"""The sgemm calls a compiled program made, counted by shape: which
products run with few rows (each call packs its slice of the weight, so a
product of 4 or 32 rows costs about as much packing as one of 300).

A perf uprobe on the library's cblas_sgemm records each call's arguments
(x86-64: order, transA, transB, M, N, K arrive in rdi, rsi, rdx, rcx, r8,
r9); this script reads them back and counts each (M, N, K, transposes) per
call of the program. With oneMKL (the `mkl` extra; PDG_BLAS=auto or mkl):

    lib=$(python -c "from pdg.lowering.toolchain import mkl; print(mkl())")
    perf probe -x $lib 'cblas_sgemm M=%cx:s32 N=%r8:s32 K=%r9:s32 TA=%si:s32 TB=%dx:s32'
    perf record -e probe_libmkl_rt:cblas_sgemm -o sgemm.data \\
        python bench/grpo_calls.py --one --config gpt2-124m --prompts 4 --group 8 \\
        --new-tokens 8 --cache DIR --calls 3
    python bench/sgemm_shapes.py sgemm.data --calls 3

With OpenBLAS (a program compiled with PDG_BLAS=openblas), probe
`scipy_cblas_sgemm` in the library `toolchain.openblas()` names, record
`probe_libscipy_openblas:scipy_cblas_sgemm`, and pass --library openblas
with --time.

Prints calls per program call and the multiply-adds they did, by shape,
most calls first, and the totals by M (the rows of the product's tile).
With --time, each shape is also timed alone on one thread (--library's
sgemm called through ctypes, its operands warm in the cache, so a lower bound
on what the program's calls cost), with the seconds per program call.
"""

from __future__ import annotations

import argparse
import collections
import functools
import re
import subprocess

FIELDS = ("M", "N", "K", "TA", "TB")
TRANSPOSED = 112  # CblasTrans


def shapes(perf_data: str) -> collections.Counter:
    """(M, N, K, A transposed, B transposed) -> calls."""
    out = subprocess.run(
        ["perf", "script", "-i", perf_data], capture_output=True, text=True, check=True
    ).stdout
    return count(out.splitlines())


def count(lines) -> collections.Counter:
    """shapes() of the lines `perf script` printed."""
    counts: collections.Counter = collections.Counter()
    for line in lines:
        found = dict(re.findall(r"\b(M|N|K|TA|TB)=(-?\d+)", line))
        if len(found) == len(FIELDS):
            m, n, k, ta, tb = (int(found[f]) for f in FIELDS)
            counts[m, n, k, ta == TRANSPOSED, tb == TRANSPOSED] += 1
    return counts


@functools.cache
def one_thread_sgemm(library: str):
    """`library`'s cblas_sgemm (sgemm_libraries), on one thread."""
    from sgemm_libraries import cblas_sgemms

    found = cblas_sgemms()
    if library not in found:
        raise SystemExit(f"sgemm_shapes: {library} is not installed (have: {', '.join(found)})")
    return found[library]


def time_alone(library: str, m: int, n: int, k: int, ta: bool, tb: bool) -> float:
    """Seconds per call of `library`'s sgemm at this shape, on one thread."""
    import time

    import numpy as np

    sgemm = one_thread_sgemm(library)
    rng = np.random.default_rng(0)
    a = rng.random((k, m) if ta else (m, k), np.float32)
    b = rng.random((n, k) if tb else (k, n), np.float32)
    c = np.zeros((m, n), np.float32)
    flags = (101, TRANSPOSED if ta else 111, TRANSPOSED if tb else 111, m, n, k)
    call = (*flags, 1.0, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1])
    call += (1.0, c.ctypes.data, n)
    sgemm(*call)
    repeats = max(1, min(50, int(2e8 / (m * n * k))))
    start = time.perf_counter()
    for _ in range(repeats):
        sgemm(*call)
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("perf_data")
    parser.add_argument("--calls", type=int, default=1, help="program calls the record holds")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--time", action="store_true", help="time each shape alone, one thread")
    parser.add_argument(
        "--library", choices=("mkl", "openblas"), default="mkl", help="whose sgemm --time calls"
    )
    args = parser.parse_args()
    counts = shapes(args.perf_data)
    if not counts:
        raise SystemExit(f"{args.perf_data}: no sgemm probe records (see this script's docstring)")
    seconds = dict.fromkeys(counts, 0.0)
    if args.time:
        seconds = {
            shape: time_alone(args.library, *shape) * n / args.calls for shape, n in counts.items()
        }
    print(f"{'M':>6} {'N':>6} {'K':>6} {'A^T':>4} {'B^T':>4} {'calls':>8} {'GMAC':>8} {'ms':>8}")
    for shape, calls in counts.most_common(args.top):
        m, n, k, ta, tb = shape
        per = calls / args.calls
        print(
            f"{m:6d} {n:6d} {k:6d} {ta!s:>4} {tb!s:>4} {per:8.0f} "
            f"{per * m * n * k / 1e9:8.2f} {1e3 * seconds[shape]:8.1f}"
        )
    by_rows: collections.Counter = collections.Counter()
    macs: collections.Counter = collections.Counter()
    ms: collections.Counter = collections.Counter()
    for (m, n, k, ta, tb), calls in counts.items():
        by_rows[m] += calls
        macs[m] += calls * m * n * k
        ms[m] += 1e3 * seconds[m, n, k, ta, tb]
    print("\nby M (rows of the tile): calls, GMAC and ms alone per program call")
    for m, calls in sorted(by_rows.items(), key=lambda kv: -kv[1]):
        print(f"{m:6d} {calls / args.calls:8.0f} {macs[m] / args.calls / 1e9:8.2f} {ms[m]:8.1f}")
    if args.time:
        print(f"all: {sum(ms.values()):.1f} ms on one thread per program call")


if __name__ == "__main__":
    main()
