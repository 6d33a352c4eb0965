"""Matrix-vector products of one sequence (decode at batch 1): y = x @ w for
a point of the batch dim b, compiled whole on one
thread (native.SPLIT_IN_LOOP_MIN_WORK = -1) and split into tiles that the
pool shares out (as pdg compiles it: the driver's loop over b, of one
point, runs on the caller, pdg-conditional-forks), into at most --tiles
tiles (native.SPLIT_IN_LOOP_TILES). Where whole and split cross is where
SPLIT_IN_LOOP_MIN_WORK belongs.

    python bench/matvec_split.py                       # small to gpt2-124m's
    python bench/matvec_split.py --shapes 768x3072 --repeats 50

Each time is the best of --repeats runs (a busy machine slows some runs:
the best is the one least disturbed) and includes pdg's per-run overhead
(binding the inputs, the result), the same in both builds. Prints a table
and writes bench/results/matvec_split.json with the machine's load."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np
from common import best

HERE = Path(__file__).resolve().parent
SHAPES = [
    "64x256",
    "128x256",
    "128x512",
    "256x512",
    "256x1024",
    "512x1024",
    "768x768",
    "768x2304",
    "768x3072",
    "3072x768",
    "768x50257",
]


def program(k: int, n: int, dtype: str):
    import pdg.frontend as pf

    prog = pf.Program("matvec")
    b = prog.dim("b", launch="B", max=1 << 16)
    x = prog.input("x", (k,), "f32", domain=[b])
    w = prog.input("w", (k, n), dtype)
    prog.output("y", pf.matmul(x, w).named("y"))
    return prog


def compiled(k: int, n: int, dtype: str, tiles: int | None, out: Path):
    """The product split into at most `tiles` tiles, or whole (None)."""
    from pdg.lowering import native
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    saved = native.SPLIT_IN_LOOP_MIN_WORK, native.SPLIT_IN_LOOP_TILES
    native.SPLIT_IN_LOOP_MIN_WORK = -1 if tiles is None else 0
    native.SPLIT_IN_LOOP_TILES = tiles or 1
    try:
        compile_module(program(k, n, dtype).build(), out, gpu=False)
    finally:
        native.SPLIT_IN_LOOP_MIN_WORK, native.SPLIT_IN_LOOP_TILES = saved
    return load(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="KxN of the weights")
    parser.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument(
        "--tiles", type=int, nargs="+", default=None, help="split builds' most tiles"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "matvec_split.json")
    args = parser.parse_args()
    import ml_dtypes
    from pdg.lowering import native

    variants = {"whole": None} | {
        f"split/{t}": t for t in (args.tiles or [native.SPLIT_IN_LOOP_TILES])
    }
    rng = np.random.default_rng(0)
    results = []
    threads = os.environ.get("PDG_NUM_THREADS", "all")
    names = " ".join(f"{v:>9}" for v in variants)
    print(
        f"{'K x N':>10} {'points':>9} {names}   (ms, best of {args.repeats}; split/T: at most "
        f"T tiles; {threads} threads, {args.dtype} weights)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            k, n = (int(v) for v in shape.split("x"))
            w = rng.standard_normal((k, n)).astype(np.float32)
            if args.dtype == "bf16":
                w = w.astype(ml_dtypes.bfloat16)
            x = rng.standard_normal((1, k)).astype(np.float32)
            expected = x.astype(np.float64) @ w.astype(np.float64)
            row = {"k": k, "n": n, "dtype": args.dtype}
            outputs = {}
            for name, tiles in variants.items():
                where = Path(tmp) / f"{name.replace('/', '-')}-{shape}"
                prog = compiled(k, n, args.dtype, tiles, where)
                inputs, symbols = {"x": x, "w": w}, {"B": 1}
                outputs[name] = np.asarray(prog.run(inputs, symbols).outputs["y"])
                err = np.abs(outputs[name] - expected).max() / np.abs(expected).max()
                assert err < 1e-5, f"{name} {shape}: relative error {err:.1e}"
                row[name] = best(lambda p=prog, i=inputs, s=symbols: p.run(i, s), args.repeats)
            row["same_bits"] = all(np.array_equal(outputs["whole"], y) for y in outputs.values())
            row["load"] = os.getloadavg()[0]
            results.append(row)
            times = " ".join(f"{row[v] * 1e3:9.3f}" for v in variants)
            print(
                f"{shape:>10} {k * n:9d} {times}   load {row['load']:.1f}"
                + ("" if row["same_bits"] else "  (bits differ)")
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
