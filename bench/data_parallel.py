"""Data parallelism over MPI against threads: the training loop of
test/python/data_parallel_programs.py (steps of a weight matrix by a
gradient summed over the batch, squashed per example so it is no one
contraction), compiled once for one process and once over a worker dim
whose ranks each take a share of the batch and all-reduce their
gradients. Rows: one process on 1 and 2 threads over the whole batch, and
2 ranks of 1 thread over half of it each (mpiexec, the `mpi` extra).
Each row is a fresh process (or job) timing its second run; the ranks
start their run together (a barrier) and the slowest rank's time counts.

    python bench/data_parallel.py                  # batch 4096, 20 steps
    python bench/data_parallel.py --batch 8192 --steps 10

Prints a table and writes bench/results/data_parallel.json."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
IN, OUT, RATE = 64, 64, 0.01

RUN = """
import sys, time
import numpy as np, pdg.runtime
path = sys.argv[1]
steps, batch, ranks, width, height = (int(a) for a in sys.argv[2:7])
rng = np.random.default_rng(0)
x = rng.standard_normal((batch, width)).astype(np.float32)
w0 = (0.3 * rng.standard_normal((width, height))).astype(np.float32)
program = pdg.runtime.load(path)
comm = None
if ranks > 1:
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    n = batch // ranks
    x = x[comm.rank * n : (comm.rank + 1) * n][None]
    symbols = {"I": steps, "B": n}
else:
    symbols = {"I": steps, "B": batch}
program.run({"x": x, "w0": w0}, symbols, comm=comm)
if comm is not None:
    comm.Barrier()
start = time.perf_counter()
result = program.run({"x": x, "w0": w0}, symbols, comm=comm)
seconds = time.perf_counter() - start
if comm is not None:
    seconds = comm.allreduce(seconds, op=MPI.MAX)
if comm is None or comm.rank == 0:
    print(seconds, float(np.abs(result.outputs["wt"][-1]).sum()))
"""


def program(world: bool):
    import pdg.frontend as pf

    prog = pf.Program("dp_steps" if world else "steps")
    i = prog.dim("i", launch="I")
    w_dim = prog.dim("w", world="W") if world else None
    b = prog.dim("b", launch="B")
    x = prog.input("x", (IN,), "f32", domain=[w_dim, b] if world else [b])
    w0 = prog.input("w0", (IN, OUT), "f32")
    wt = prog.recurrent((IN, OUT), "f32", domain=[i], name="wt")
    y = pf.tanh(pf.matmul(x, wt))
    per_example = pf.tanh(pf.einsum("k,n->kn", x, y))
    g = per_example[0 : b.size].sum(axis=0)
    if world:
        g = pf.all_reduce(g, over=w_dim)
    wt[i == 0] = w0
    wt[i > 0] = wt[i - 1] - g[i - 1] * RATE
    prog.output("wt", wt)
    return prog


def run(command: list[str], threads: int, mpi: bool) -> tuple[float, float]:
    env = {**os.environ, "PDG_NUM_THREADS": str(threads)}
    if mpi:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    seconds, checksum = done.stdout.split()[-2:]
    return float(seconds), float(checksum)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    from pdg.lowering.artifact import compile_module

    mpiexec = Path(sys.executable).parent / "mpiexec"
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for world in (False, True):
            paths[world] = Path(tmp) / f"{'dp' if world else 'one'}.pdgx"
            compile_module(program(world).build(), paths[world], gpu=False)
        python = [sys.executable, "-c", RUN]
        rows = []
        for label, threads, ranks in (("1 process", 1, 1), ("1 process", 2, 1), ("2 ranks", 1, 2)):
            size = [str(args.steps), str(args.batch), str(ranks), str(IN), str(OUT)]
            if ranks == 1:
                command = [*python, str(paths[False]), *size]
            else:
                command = [str(mpiexec), "-n", "2", "--oversubscribe", *python,
                           str(paths[True]), *size]  # fmt: skip
            seconds, checksum = run(command, threads, ranks > 1)
            rows.append({"run": label, "threads_per_process": threads, "ranks": ranks,
                         "seconds": seconds, "checksum": checksum})  # fmt: skip
    base = rows[0]["seconds"]
    print(f"batch {args.batch}, {args.steps} steps, {IN}x{OUT} weights")
    print(f"{'run':<12} {'threads':>8} {'seconds':>9} {'speedup':>8} {'checksum':>12}")
    for r in rows:
        print(
            f"{r['run']:<12} {r['threads_per_process']:>8} {r['seconds']:>9.3f} "
            f"{base / r['seconds']:>7.2f}x {r['checksum']:>12.4f}"
        )
    out = HERE / "results" / "data_parallel.json"
    out.write_text(json.dumps({"batch": args.batch, "steps": args.steps, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
