"""sgemm by shape in each BLAS pdg can call, on one thread, through ctypes:
OpenBLAS (scipy-openblas32), oneMKL (the `mkl` extra), and oneMKL with the
weights packed once beforehand (cblas_sgemm_pack, then
cblas_sgemm_compute: what a program could gain by packing each weight once
per iteration instead of at every call). C = A B with A of M rows (a GRPO
step's rows) and B the weights (K x N), row-major, operands warm.

    python bench/sgemm_libraries.py                 # gpt2-124m's weights, 8 and 32 rows
    python bench/sgemm_libraries.py --rows 4 32 256 --shapes 896x4864
    python bench/sgemm_libraries.py --rows 32 --tiles 64 128 384   # MKL, as column tiles

With --tiles, each product is instead made as calls of one library's
(--library) sgemm on column tiles of B and C of each width given (as a
program's thread tiles call it: B and C strided, A read whole by every
call), and once whole; written to bench/results/sgemm-tiles.json.

Prints GMAC/s (multiply-adds per second) per shape and library, the best
of --repeats timings of --calls calls each, and writes
bench/results/sgemm-libraries.json with the machine's load. Each library
runs on one thread, as pdg runs it (MKL's sequential layer)."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHAPES = ["768x768", "768x2304", "768x3072", "3072x768", "768x50257"]
ROW_MAJOR, NO_TRANS, PACKED, B_MATRIX = 101, 111, 151, 162
SEQUENTIAL = 1  # MKL_THREADING_SEQUENTIAL


def cblas_sgemms() -> dict:
    """name -> the library's cblas_sgemm (all 14 arguments, row-major
    flags as cblas takes them), set to one thread; where installed."""
    from pdg.lowering.toolchain import mkl, openblas

    i, f, p = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
    sgemm_types = [i] * 6 + [f, p, i, p, i, f, p, i]
    found = {}
    if openblas() is not None:
        ob = ctypes.CDLL(str(openblas()))
        ob.scipy_openblas_set_num_threads(1)
        ob.scipy_cblas_sgemm.argtypes = sgemm_types
        found["openblas"] = ob.scipy_cblas_sgemm
    if mkl() is not None:
        rt = ctypes.CDLL(str(mkl()))
        rt.MKL_Set_Threading_Layer(SEQUENTIAL)
        rt.cblas_sgemm.argtypes = sgemm_types
        found["mkl"] = rt.cblas_sgemm
    return found


def libraries() -> dict:
    """name -> f(a, b, c, m, n, k) adding a @ b to c; where installed."""
    from pdg.lowering.toolchain import mkl

    found = {}
    for name, sgemm in cblas_sgemms().items():

        def plain(a, b, c, m, n, k, sgemm=sgemm):
            pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
            sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, pa, k, pb, n, 1.0, pc, n)

        found[name] = plain
    if mkl() is not None:
        i, f, p = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        rt = ctypes.CDLL(str(mkl()))  # the same handle cblas_sgemms opened
        rt.cblas_sgemm_pack_get_size.restype = ctypes.c_size_t
        rt.cblas_sgemm_pack_get_size.argtypes = [i] * 4
        rt.cblas_sgemm_pack.argtypes = [i] * 6 + [f, p, i, p]
        rt.cblas_sgemm_compute.argtypes = [i] * 6 + [p, i, p, i, f, p, i]
        packs = {}

        def mkl_packed(a, b, c, m, n, k):
            key = (b.ctypes.data, m, n, k)
            if key not in packs:  # packed once, outside the timing's steady calls
                size = rt.cblas_sgemm_pack_get_size(B_MATRIX, m, n, k)
                buffer = np.zeros(size // 4 + 16, np.float32)
                address = (buffer.ctypes.data + 63) // 64 * 64
                pb = b.ctypes.data
                rt.cblas_sgemm_pack(ROW_MAJOR, B_MATRIX, NO_TRANS, m, n, k, 1.0, pb, n, address)
                packs[key] = (buffer, address)
            operands = (m, n, k, a.ctypes.data, k, packs[key][1], n, 1.0, c.ctypes.data, n)
            rt.cblas_sgemm_compute(ROW_MAJOR, NO_TRANS, PACKED, *operands)

        found["mkl-packed"] = mkl_packed
    return found


def by_column_tiles(sgemm, a, b, c, m: int, n: int, k: int, width: int) -> None:
    """c += a @ b as one call of `sgemm` (cblas_sgemms) per `width` columns."""
    for j in range(0, n, width):
        cols = min(width, n - j)
        pb, pc = b.ctypes.data + 4 * j, c.ctypes.data + 4 * j
        sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, cols, k, 1.0, a.ctypes.data, k, pb, n, 1.0, pc, n)


def tile_runners(sgemm, widths: list[int]) -> dict:
    """width -> f(a, b, c, m, n, k) adding a @ b to c by column tiles of
    that width, and "whole": one call."""

    def tiles_of(width: int | None):
        def run(a, b, c, m, n, k):
            by_column_tiles(sgemm, a, b, c, m, n, k, width or n)

        return run

    return {str(width): tiles_of(width) for width in widths} | {"whole": tiles_of(None)}


def timed(run, calls: int, repeats: int) -> float:
    run()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="KxN of the weights")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tiles", type=int, nargs="+", help="column tile widths to time")
    parser.add_argument("--library", choices=("mkl", "openblas"), default="mkl")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    default = "sgemm-tiles.json" if args.tiles else "sgemm-libraries.json"
    args.out = args.out or HERE / "results" / default
    if args.tiles:
        sgemm = cblas_sgemms().get(args.library)
        if sgemm is None:
            raise SystemExit(f"sgemm_libraries: {args.library} is not installed")
        found = tile_runners(sgemm, args.tiles)
    else:
        found = libraries()
    if not found:
        raise SystemExit("sgemm_libraries: neither OpenBLAS nor oneMKL is installed")
    rng = np.random.default_rng(0)
    print(f"{'rows':>5} {'K x N':>10} " + " ".join(f"{name:>11}" for name in found) + "   (GMAC/s)")
    results = []
    for shape in args.shapes:
        k, n = (int(v) for v in shape.split("x"))
        b = rng.standard_normal((k, n)).astype(np.float32)
        for m in args.rows:
            a = rng.standard_normal((m, k)).astype(np.float32)
            expected = a.astype(np.float64) @ b.astype(np.float64)
            row = {"rows": m, "k": k, "n": n, "load": os.getloadavg()[0]}
            for name, sgemm in found.items():
                c = np.zeros((m, n), np.float32)
                sgemm(a, b, c, m, n, k)
                err = np.abs(c - expected).max() / np.abs(expected).max()
                assert err < 1e-5, f"{name} {m}x{shape}: relative error {err:.1e}"
                seconds = timed(lambda s=sgemm, c=c: s(a, b, c, m, n, k), args.calls, args.repeats)
                row[name] = m * k * n / seconds / 1e9
            results.append(row)
            rates = " ".join(f"{row[name]:11.1f}" for name in found)
            print(f"{m:5d} {shape:>10} {rates}   load {row['load']:.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    what = {"library": args.library, "tiles": args.tiles} if args.tiles else {}
    args.out.write_text(json.dumps({**what, "results": results}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
