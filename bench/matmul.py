"""Body code generation on matrix products: y = (x @ w1) @ w2 for B rows
of width d, compiled per row (matrix-vector bodies) and with the rows
folded into the point type (pdg-vectorize: matrix-product bodies), against
NumPy's BLAS in the same run. Prints GFLOP/s and writes results/matmul.json.
Run both on one thread to compare the code itself:

    OPENBLAS_NUM_THREADS=1 PDG_NUM_THREADS=1 python bench/matmul.py   # d = 32, 64, 128; B = 2048
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def program(d: int):
    import pdg.frontend as pf

    prog = pf.Program("mm")
    b = prog.dim("b", launch="B", max=1 << 16)
    x = prog.input("x", (d,), "f32", domain=[b])
    w1 = prog.input("w1", (d, d), "f32")
    w2 = prog.input("w2", (d, d), "f32")
    prog.output("y", pf.matmul(pf.matmul(x, w1).named("h"), w2).named("y"))
    return prog


def seconds(run, repeats: int) -> float:
    run()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        run()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--widths", default="32,64,128")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "matmul.json")
    args = parser.parse_args()
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    rng = np.random.default_rng(0)
    rows = []
    print(f"{'d':>4} {'per row':>10} {'vectorized':>11} {'NumPy':>8}   (GFLOP/s, {args.rows} rows)")
    for d in [int(w) for w in args.widths.split(",")]:
        inputs = {
            "x": rng.normal(size=(args.rows, d)).astype(np.float32),
            "w1": rng.normal(size=(d, d)).astype(np.float32),
            "w2": rng.normal(size=(d, d)).astype(np.float32),
        }
        expected = inputs["x"] @ inputs["w1"] @ inputs["w2"]
        flops = 4 * args.rows * d * d
        row = {"d": d}
        with tempfile.TemporaryDirectory() as tmp:
            for name, vectorize in (("per_row", False), ("vectorized", True)):
                path = Path(tmp) / name
                compile_module(program(d).build(), path, gpu=False, vectorize=vectorize)
                compiled = load(path)
                out = compiled.run(inputs, symbols={"B": args.rows}).outputs["y"]
                scale = np.abs(expected).max()
                assert np.abs(np.asarray(out) - expected).max() < 1e-4 * scale
                t = seconds(
                    lambda c=compiled, i=inputs: c.run(i, symbols={"B": args.rows}), args.repeats
                )
                row[name] = flops / t / 1e9
        row["numpy"] = (
            flops / seconds(lambda i=inputs: i["x"] @ i["w1"] @ i["w2"], args.repeats) / 1e9
        )
        rows.append(row)
        print(f"{d:4d} {row['per_row']:10.1f} {row['vectorized']:11.1f} {row['numpy']:8.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": args.rows, "results": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
