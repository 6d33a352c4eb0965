"""Matrix products at a model's sizes: y = x @ w with the rows of x folded
into one product (pdg-vectorize), compiled three times (pdg's register
micro-kernels alone; the BLAS's sgemm (oneMKL's or OpenBLAS's, as
$PDG_BLAS chooses) through pdg-call-blas for every
product whatever its size; and as pdg compiles it, by the thresholds of
pdg.lowering.native), against NumPy's own BLAS in the same process.
Where the kernel and sgemm cross is where those thresholds (BLAS_MIN_FLOPS,
BLAS_MIN_DIM) belong; they apply to each tile that the pool runs
(pdg-parallelize-large-ops cuts a large product first).

    python bench/products.py                       # gpt2-124m's, 8 rows
    python bench/products.py --rows 1 8 64 512 --shapes 768x768 768x3072
    PDG_BLAS=openblas python bench/products.py     # OpenBLAS where MKL is installed

Each time is the best of --repeats runs (a busy machine slows some runs:
the best is the one least disturbed), and includes pdg's per-run overhead
(binding the inputs, the result). Prints a table and writes
bench/results/products.json with the machine's load (`os.getloadavg`)."""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import tempfile
from pathlib import Path

import numpy as np
from common import best

HERE = Path(__file__).resolve().parent
# gpt2-124m: attention and MLP weights, the vocabulary projection.
SHAPES = ["768x768", "768x3072", "3072x768", "768x50257"]


def program(k: int, n: int):
    import pdg.frontend as pf

    prog = pf.Program("product")
    b = prog.dim("b", launch="B", max=1 << 16)
    x = prog.input("x", (k,), "f32", domain=[b])
    w = prog.input("w", (k, n), "f32")
    prog.output("y", pf.matmul(x, w).named("y"))
    return prog


def compiled(k: int, n: int, how: str, out: Path):
    """The product compiled with sgemm for every size, never, or as pdg
    does by default."""
    from pdg.lowering import native
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    saved = native.BLAS_MIN_FLOPS, native.BLAS_MIN_DIM
    if how != "default":
        native.BLAS_MIN_FLOPS = native.BLAS_MIN_DIM = 1 if how == "sgemm" else 1 << 62
    try:
        compile_module(program(k, n).build(), out, gpu=False, vectorize=True)
    finally:
        native.BLAS_MIN_FLOPS, native.BLAS_MIN_DIM = saved
    return load(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[8])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="KxN of the weights")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--openblas-threads",
        type=int,
        default=0,
        help="let OpenBLAS run its own threads inside pdg's (pdg sets 1): what that costs",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "products.json")
    args = parser.parse_args()
    from pdg.lowering.toolchain import blas_library, openblas

    library = blas_library()  # $PDG_BLAS: oneMKL where the mkl extra is installed
    if library is None:
        raise SystemExit("products: no BLAS to call (PDG_BLAS=none, or none installed)")
    if args.openblas_threads:
        if library != openblas():
            raise SystemExit("products: --openblas-threads needs PDG_BLAS=openblas")
        blas = ctypes.CDLL(str(library))  # the instance the programs open
        blas.pdg_set = blas.scipy_openblas_set_num_threads
    rng = np.random.default_rng(0)
    results = []
    threads = os.environ.get("PDG_NUM_THREADS", "all")
    columns = " ".join(f"{name:>9}" for name in ("kernel", "sgemm", "default", "NumPy"))
    print(f"sgemm from {library.name}")
    print(f"{'rows':>5} {'K x N':>10} {columns}   (ms, best of {args.repeats}; {threads} threads)")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            k, n = (int(v) for v in shape.split("x"))
            w = rng.standard_normal((k, n)).astype(np.float32)
            programs = {
                name: compiled(k, n, name, Path(tmp) / f"{name}-{shape}")
                for name in ("kernel", "sgemm", "default")
            }
            for rows in args.rows:
                x = rng.standard_normal((rows, k)).astype(np.float32)
                expected = x.astype(np.float64) @ w.astype(np.float64)
                row = {"rows": rows, "k": k, "n": n, "blas": library.name}
                for name, prog in programs.items():
                    inputs, symbols = {"x": x, "w": w}, {"B": rows}
                    got = np.asarray(prog.run(inputs, symbols).outputs["y"])  # opens the BLAS
                    if args.openblas_threads:
                        blas.pdg_set(args.openblas_threads)
                    err = np.abs(got - expected).max() / np.abs(expected).max()
                    assert err < 1e-5, f"{name} {rows}x{shape}: relative error {err:.1e}"
                    row[name] = best(lambda p=prog, i=inputs, s=symbols: p.run(i, s), args.repeats)
                row["numpy"] = best(lambda x=x, w=w: x @ w, args.repeats)
                row["load"] = os.getloadavg()[0]
                results.append(row)
                times = " ".join(
                    f"{row[name] * 1e3:9.3f}" for name in ("kernel", "sgemm", "default", "numpy")
                )
                print(f"{rows:5d} {shape:>10} {times}   load {row['load']:.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
