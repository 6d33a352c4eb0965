"""The thread pool on a busy machine: a decode program with many short
parallel loops per step (batch 4, small model), run with PDG_NUM_THREADS=1
and 2, on an idle machine and beside busy processes that keep cores
occupied. Each run is a fresh process; the rows take turns.

    python bench/threads.py                 # 1 and 2 threads, 0 and 1 busy processes
    python bench/threads.py --threads 1 2 8 --busy 0 1 2

A pool whose waiting threads spin collapses when a core is taken: the
thread it waits for is not running. Prints a table (seconds per run, and
the ratio to 1 thread on the same load) and writes
bench/results/threads.json."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import Config  # noqa: E402

CONFIG = Config(impl="pdg", attention="causal", length=256, d_model=64, layers=2, heads=4,
                vocab=256, batch=4, max_length=256)  # fmt: skip

RUN = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np, pdg.runtime
from common import PROMPT, Config, weights
config = Config(**json.loads(sys.argv[2]))
program = pdg.runtime.load(sys.argv[3])
inputs = {p.replace(".", "_"): w for p, w in weights(config).items()}
b = config.batch
inputs.update(prompt=np.array([PROMPT] * b, np.int64), limit=np.full(b, config.length, np.int64),
              prompt_len=np.full(b, len(PROMPT), np.int64))
program.run(inputs, {"B": b})
start = time.perf_counter()
program.run(inputs, {"B": b})
print(time.perf_counter() - start)
"""


def busy_processes(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def one_run(artifact: Path, threads: int, timeout: float) -> float | None:
    env = {**os.environ, "PDG_NUM_THREADS": str(threads)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(HERE), json.dumps(CONFIG.__dict__), str(artifact)],
            capture_output=True, text=True, env=env, timeout=timeout, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    parser.add_argument("--out", default=str(HERE / "results" / "threads.json"))
    args = parser.parse_args()
    import impl_pdg

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        artifact = Path(tmp) / "decode.pdgx"
        impl_pdg.compile_artifact(CONFIG, artifact)
        for busy in args.busy:
            hogs = busy_processes(busy)
            time.sleep(0.5)
            try:
                times: dict[int, list[float | None]] = {t: [] for t in args.threads}
                for _ in range(args.repeat):
                    for threads in args.threads:
                        times[threads].append(one_run(artifact, threads, args.timeout))
            finally:
                for hog in hogs:
                    hog.kill()
            done = {t: [x for x in v if x is not None] for t, v in times.items()}
            base = statistics.median(done[args.threads[0]]) if done[args.threads[0]] else None
            for threads in args.threads:
                median = statistics.median(done[threads]) if done[threads] else None
                rows.append(
                    {
                        "busy": busy,
                        "threads": threads,
                        "median_s": median,
                        "timeouts": sum(x is None for x in times[threads]),
                        "ratio_to_first": median / base if median and base else None,
                        "runs": times[threads],
                    }
                )
    print(f"cores: {os.cpu_count()}; decode batch {CONFIG.batch}, {CONFIG.length} tokens, "
          f"d_model {CONFIG.d_model}")  # fmt: skip
    print(f"{'busy procs':>10} {'threads':>8} {'median s':>9} {'vs ' + str(args.threads[0]):>6} "
          f"{'timeouts':>9}")  # fmt: skip
    for r in rows:
        median = f"{r['median_s']:.3f}" if r["median_s"] else "-"
        ratio = f"{r['ratio_to_first']:.2f}" if r["ratio_to_first"] else "-"
        print(f"{r['busy']:>10} {r['threads']:>8} {median:>9} {ratio:>6} {r['timeouts']:>9}")
    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
