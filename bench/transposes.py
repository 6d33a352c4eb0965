"""A weight's transpose, y = w^T, at a model's shapes, compiled with the
copy in square blocks (pdg-tile-transposes, native.TRANSPOSE_TILE) and as
one loop nest (TRANSPOSE_TILE = 0), against NumPy's copy of w.T. GRPO's
one program makes such a copy of every weight once per iteration, for the
input gradients' products (pdg.autodiff.rules._contraction).

    python bench/transposes.py                     # gpt2-124m's weights
    python bench/transposes.py --shapes 896x4864 4864x896 --tiles 16 32 64

Each time is the best of --repeats runs, pdg's including its ~0.1 ms per
run to bind the input and the result; the GB/s column counts the bytes
read and written. Prints a table and writes bench/results/transposes.json
with the machine's load."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np
from common import best

HERE = Path(__file__).resolve().parent
SHAPES = ["768x2304", "768x3072", "3072x768", "768x768"]


def program(k: int, n: int):
    import pdg.frontend as pf

    prog = pf.Program("transpose")
    w = prog.input("w", (k, n), "f32")
    prog.output("t", pf.transpose(w).named("t"))
    return prog


def compiled(k: int, n: int, tile: int, out: Path):
    from pdg.lowering import native
    from pdg.lowering.artifact import compile_module
    from pdg.runtime import load

    saved = native.TRANSPOSE_TILE
    native.TRANSPOSE_TILE = tile
    try:
        compile_module(program(k, n).build(), out, gpu=False)
    finally:
        native.TRANSPOSE_TILE = saved
    return load(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="KxN of the weights")
    parser.add_argument("--tiles", type=int, nargs="+", default=[0, 16, 32], help="0: untiled")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "transposes.json")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = []
    threads = os.environ.get("PDG_NUM_THREADS", "all")
    columns = " ".join(f"{f'tile {t}':>9}" for t in args.tiles)
    print(f"{'K x N':>10} {columns}     NumPy   (ms, best of {args.repeats}; {threads} threads)")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            k, n = (int(v) for v in shape.split("x"))
            w = rng.standard_normal((k, n)).astype(np.float32)
            row = {"k": k, "n": n}
            for tile in args.tiles:
                prog = compiled(k, n, tile, Path(tmp) / f"t{tile}-{shape}")
                got = np.asarray(prog.run({"w": w}).outputs["t"])
                assert np.array_equal(got, w.T), f"tile {tile} {shape}: wrong transpose"
                row[f"tile_{tile}"] = best(lambda p=prog: p.run({"w": w}), args.repeats)
            row["numpy"] = best(lambda: np.ascontiguousarray(w.T), args.repeats)
            row["load"] = os.getloadavg()[0]
            results.append(row)
            times = " ".join(f"{row[f'tile_{t}'] * 1e3:9.3f}" for t in args.tiles)
            rate = 2 * w.nbytes / min(row[f"tile_{t}"] for t in args.tiles) / 1e9
            print(
                f"{shape:>10} {times} {row['numpy'] * 1e3:9.3f}   "
                f"best {rate:.1f} GB/s, load {row['load']:.1f}"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
