"""GRPO as one program, call by call, for artifacts already compiled: an
A/B of the artifacts that two commits (or two compiler options) built.

Each --cache directory holds the artifacts a `bench/grpo.py --impls
pdg-one --compile-only --cache DIR` run wrote (with any commit). A fresh
process per directory loads them as they are, whatever key the running
compiler would give the program now, and calls the program --calls times
with one iteration each. Per call it reports the time, the minor page
faults (fresh pages the call touched), the stores it grew and the
runtime's byte counters: kept (what the pool holds between calls), live
and peak. The directories take turns, --repeat times; the table gives
each directory's median per call and the ratio of the steady calls (the
third on) to the first directory's. Writes results/grpo-calls.json (or --out).

    python bench/grpo.py --config gpt2-124m --prompts 4 --group 8 --new-tokens 8 \\
        --impls pdg-one --compile-only --cache /tmp/base        # at the old commit
    python bench/grpo.py ... --compile-only --cache /tmp/new    # at the new one
    python bench/grpo_calls.py --config gpt2-124m --prompts 4 --group 8 \\
        --new-tokens 8 --cache /tmp/base --cache /tmp/new --repeat 2

The model flags must be those the artifacts were compiled with: the
weights and prompts are made from them here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from grpo_common import add_setting_args, resolve_setting_args, setting_flags

HERE = Path(__file__).resolve().parent
SETTINGS = ("vocab", "prompts", "group", "d_model", "layers", "heads", "new_tokens", "microbatch")
COUNTERS = ("pdg_bytes_kept", "pdg_bytes_live", "pdg_bytes_peak")  # MiB
STEADY = 2  # calls before the steady state (see grpo.py's run_pdg_one)


def artifact_in(cache: Path, name: str) -> Path:
    """The one `name` artifact in a cache directory; several or none is
    an error that names them (the A/B must not pick one by chance)."""
    found = sorted(cache.glob(f"{name}-*.pdgx"))
    if len(found) != 1:
        listed = ", ".join(p.name for p in found) or "none"
        raise SystemExit(
            f"grpo_calls: {cache} must hold exactly one {name}-*.pdgx (it holds {listed}); "
            "compile each side into a directory of its own"
        )
    return found[0]


def use_artifacts_in(cache: Path) -> None:
    """Make the trainer load the artifacts found in `cache` instead of
    compiling (or looking up by key): this process times them as built."""
    from pdg.lowering.cache import Built
    from pdg.rl import program_trainer

    def found(program, name, workdir, cache=None, **options):
        if name == "grpo":
            return Built(artifact_in(Path(cache), name), 0.0, True)
        # The greedy evaluator's program is loaded, never timed here: the
        # newest one serves.
        newest = max(Path(cache).glob(f"{name}-*.pdgx"), key=lambda p: p.stat().st_mtime)
        return Built(newest, 0.0, True)

    program_trainer.build_artifact = found


def grows_so_far(program) -> int | None:
    """Stores grown in this process; None for an artifact built before
    the runtime counted them."""
    try:
        return program.runtime_counter("pdg_grows")
    except ValueError:
        return None


def run_calls(args) -> dict:
    """In this process: --calls calls of one iteration of the artifact in
    args.cache, each measured."""
    from grpo import pdg_trainer

    use_artifacts_in(args.cache)
    args.impl, args.vectorize = "pdg-one", False
    task, weights, trainer = pdg_trainer(args, one_program=True)
    program = trainer.run_grpo
    state = trainer.start(weights)
    rng = np.random.default_rng(0)
    calls = []
    for _ in range(args.calls):
        prompts = [p for p, _ in task.problems(rng, args.prompts)]
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        state, _ = trainer.run(state, [prompts])
        seconds = time.perf_counter() - start
        fresh = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        counters = {n: program.runtime_counter(n) / 2**20 for n in COUNTERS}
        grown = grows_so_far(program)
        if grown is not None:
            grown -= sum(c["grows"] for c in calls)
        calls.append({"ms": 1e3 * seconds, "minor_faults": fresh, "grows": grown, **counters})
    return {"artifact": str(artifact_in(args.cache, "grpo")), "calls": calls}


def run_fresh(cache: Path, args) -> dict:
    cmd = [sys.executable, __file__, "--one", "--cache", str(cache), "--calls", str(args.calls)]
    cmd += setting_flags(args, SETTINGS)
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"grpo_calls: {cache} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_or_none(xs: list):
    return None if None in xs else statistics.median(xs)


def medians(runs: list[dict]) -> list[dict]:
    """Per call index, each measure's median over the runs."""
    return [
        {k: median_or_none([r["calls"][i][k] for r in runs]) for k in runs[0]["calls"][i]}
        for i in range(len(runs[0]["calls"]))
    ]


def steady_ms(calls: list[dict]) -> float:
    return statistics.median(c["ms"] for c in calls[STEADY:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_setting_args(parser, prompts=4, d_model=32, heads=2, new_tokens=8)
    parser.add_argument(
        "--cache", type=Path, action="append", required=True, help="a directory (repeat for A/B)"
    )
    parser.add_argument("--calls", type=int, default=5, help="calls of one iteration per run")
    parser.add_argument("--repeat", type=int, default=2, help="fresh runs per directory")
    parser.add_argument("--one", action="store_true", help="run one directory, in this process")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    resolve_setting_args(parser, args)
    if args.calls <= STEADY:
        parser.error(f"--calls must be more than {STEADY}: the steady calls are compared")
    if args.one:
        (args.cache,) = args.cache  # the trainer takes one directory
        print(json.dumps(run_calls(args)))
        return
    for cache in args.cache:  # refused before anything runs
        artifact_in(cache, "grpo")
    load = [os.getloadavg()[0]]
    tries: dict[Path, list] = {c: [] for c in args.cache}
    for _ in range(args.repeat):
        for cache in args.cache:
            tries[cache].append(run_fresh(cache, args))
    load.append(os.getloadavg()[0])
    rows = {str(c): medians(runs) for c, runs in tries.items()}
    base = steady_ms(rows[str(args.cache[0])])
    print(f"median of {args.repeat} fresh runs each; load {load[0]:.1f} -> {load[1]:.1f}")
    print(
        f"{'cache':30} {'call':>4} {'ms':>9} {'faults MiB':>10} {'grows':>6} {'kept':>7} "
        f"{'peak':>7}"
    )
    for name, calls in rows.items():
        for i, c in enumerate(calls):
            mib = c["minor_faults"] * resource.getpagesize() / 2**20
            grows = "-" if c["grows"] is None else f"{c['grows']:.0f}"
            print(
                f"{name[-30:]:30} {i:4d} {c['ms']:9.1f} {mib:10.0f} {grows:>6} "
                f"{c['pdg_bytes_kept']:7.0f} {c['pdg_bytes_peak']:7.0f}"
            )
        print(f"{name[-30:]:30} steady {steady_ms(calls):.1f} ms: {steady_ms(calls) / base:.3f}x")
    out = args.out or HERE / "results" / "grpo-calls.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    config = {k: getattr(args, k) for k in (*SETTINGS, "config", "calls", "repeat")}
    record = {"config": config, "load": load, "medians": rows}
    record["runs"] = {str(c): runs for c, runs in tries.items()}
    out.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
