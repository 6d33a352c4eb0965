"""GRPO benchmark: one iteration (sample a group of completions per prompt,
score them, reference log-probs, update the policy) of the same model on
the same task, with pdg (compiled sampling and update, rl.SampledGRPOTrainer; and
GRPO as one compiled program, rl.GRPOProgramTrainer: "pdg-one"),
with a plain PyTorch loop written as a user would (batched, left-padded
prompts, float32, 2 threads), and with TRL's GRPOTrainer (bench/impl_trl.py:
CPU, fp32, loss_type="grpo", no vLLM). Each runs in a fresh process (its
own peak memory). Reports time per iteration (median after warm-up) split
into generation, reference log-probs and update, and peak memory; prints a
table and writes results/grpo.json (or results/grpo-sweep.json).

    python bench/grpo.py                                  # 32 prompts x 8, d_model 32
    python bench/grpo.py --prompts 8 --d-model 128 --heads 4 --new-tokens 8
    python bench/grpo.py --config small-bpe --prompts 4 --new-tokens 8 --iterations 4
    python bench/grpo.py --sweep 4,8,16,32                # over response lengths
    python bench/grpo.py --vectorize                      # pdg with pdg-vectorize
    python bench/grpo.py --repeat 3                       # median of 3 fresh runs each
    python bench/grpo.py --impls pdg-one,pdg-one-group    # 4 prompts per microbatch, or 1

--config gpt2-124m or small-bpe (grpo_common.CONFIGS) sets --vocab,
--d-model, --layers and --heads; one of those given as well must agree
with it, or the run is refused. With a vocabulary larger than the task's
13 tokens, the task's ids sit inside it and the head covers all of it.

pdg compiles ahead of time: a first process compiles each program into a
cache directory (its time and peak memory are the "compile" columns), and
the timed process loads the artifacts from it, as a training job does
after its first run (pdg.lowering.cache). The MiB column is the timed
process's peak.

Every completion runs to --new-tokens at the initial weights (the policy
rarely samples EOS), so the response length is that bound. The TRL
implementation needs the [trl] extra (pip install -e '.[trl]'); without
it the TRL row is skipped, with a message. OpenBLAS threads are off in
every process (OPENBLAS_NUM_THREADS=1): NumPy's idle pool spins on the 2
cores and none of the three uses NumPy's BLAS for its work.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
from grpo_common import (
    add_setting_args,
    peak_mib,
    resolve_setting_args,
    setting,
    setting_flags,
    torch_grpo_loss,
    torch_logits,
    torch_logp,
    torch_prompts,
    torch_sample,
)

HERE = Path(__file__).resolve().parent
IMPLS = ("pdg", "pdg-one", "torch", "trl")  # run by default
# Variants of pdg-one, the one program whose points are aligned
# microbatches of --microbatch prompts' groups: pdg-one-group, a prompt's
# group per point (microbatch=1); pdg-one-completion, a point per
# completion (layout="completion"); pdg-one-unshared, pdg-one with every
# row computing its prompt's positions (share_prefill=False);
# pdg-one-stale1, pdg-one sampling with the weights one iteration back
# (staleness=1; its iterations still run one after the other);
# pdg-one-batched, pdg-one with its weight gradients computed as one
# product over all the steps (batch_steps=True), not one product per
# replayed step summed after (the default since batching measured slower);
# pdg-one-forced, pdg-one with the reference
# scoring the finished completions over all their steps at once
# (teacher_forced_reference=True), not a step at a time; pdg-one-scored,
# the policy's log-probs for the loss (and their gradient) teacher-forced
# too (teacher_forced_policy=True), as TRL scores after generating.
VARIANTS = (
    "pdg-one-group",
    "pdg-one-completion",
    "pdg-one-unshared",
    "pdg-one-stale1",
    "pdg-one-batched",
    "pdg-one-forced",
    "pdg-one-scored",
)
CHOICES = (*IMPLS, *VARIANTS)
COMPILED = ("pdg", "pdg-one", *VARIANTS)
WIDTHS = (8, 11, 10, 8, 6, 12)  # the table's columns
# The options a fresh process of one implementation is given.
SETTINGS = (
    "vocab",
    "prompts",
    "group",
    "d_model",
    "layers",
    "heads",
    "new_tokens",
    "iterations",
    "microbatch",
)


def pdg_trainer(args, one_program: bool):
    """(task, initial weights, trainer): rl.GRPOProgramTrainer or
    rl.SampledGRPOTrainer, its programs compiled into (or loaded from) args.cache."""
    from pdg import rl

    task, config, weights, grpo = setting(args)
    make = rl.GRPOProgramTrainer if one_program else rl.SampledGRPOTrainer
    if one_program:
        layout = "completion" if args.impl == "pdg-one-completion" else "group"
        # Every variant but these two runs --microbatch prompts per point.
        aligned = args.impl not in ("pdg-one-group", "pdg-one-completion")
        microbatch = args.microbatch if aligned else 1
        options = {"layout": layout, "microbatch": microbatch}
        if args.impl == "pdg-one-unshared":
            options["share_prefill"] = False
        if args.impl == "pdg-one-stale1":
            options["staleness"] = 1
        if args.impl == "pdg-one-batched":
            options["batch_steps"] = True
        if args.impl in ("pdg-one-forced", "pdg-one-scored"):
            options["teacher_forced_reference"] = True
        if args.impl == "pdg-one-scored":
            options["teacher_forced_policy"] = True
    else:
        options = {"vectorize": args.vectorize}
    trainer = make(
        config,
        grpo,
        task.reward,
        task.tokenizer,
        task.prompt_width,
        args.new_tokens,
        lr=3e-4,
        cache=args.cache,
        **options,
    )
    return task, weights, trainer


def run_pdg(args) -> dict:
    task, weights, trainer = pdg_trainer(args, one_program=False)
    if args.compile_only:
        return compiled(trainer)
    state = trainer.start(weights)
    rng = np.random.default_rng(0)
    gen, upd = [], []
    for _ in range(args.iterations):
        prompts = [p for p, _ in task.problems(rng, args.prompts)]
        state, stats = trainer.step(state, prompts)
        gen.append(stats.seconds["generation"])
        upd.append(stats.seconds["update"])
    # The reference model runs inside the sampling program, token by token.
    return summary(gen, None, upd)


def compiled(trainer) -> dict:
    """What a --compile-only process reports: compiling's time and peak."""
    phases = getattr(trainer, "compile_phases", {})  # pdg-one's program, when it compiled
    return {
        "compile_s": sum(trainer.compile_seconds.values()),
        "peak_rss_mib": peak_mib(),
        "phases": {name: round(s, 1) for name, s in phases.items()},
    }


def run_pdg_one(args) -> dict:
    """GRPO as one program (rl.GRPOProgramTrainer): two calls of one
    iteration to warm up, then one call of all the iterations, timed as a
    whole. Two, as a training loop's steady state: the first call's new
    weights and moments cannot reuse the memory of the caller's initial
    arrays (NumPy's), so the second call still takes fresh pages for them
    (1.2 GiB at gpt2-124m); from the third on, the freed state of the call
    before serves."""
    task, weights, trainer = pdg_trainer(args, one_program=True)
    if args.compile_only:
        return compiled(trainer)
    state = trainer.start(weights)
    rng = np.random.default_rng(0)

    def batches(n):
        return [[p for p, _ in task.problems(rng, args.prompts)] for _ in range(n)]

    for _ in range(2):
        state, _ = trainer.run(state, batches(1))
    program = trainer.run_grpo
    calls = program.runtime_counter("pdg_blas_calls")
    grows = program.runtime_counter("pdg_grows")
    used = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    trainer.run(state, batches(args.iterations))
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
    return {
        "ms_per_iteration": 1e3 * seconds / args.iterations,
        # Where the time goes, for the timed call: the cores it kept busy,
        # the fresh pages it touched, the sgemm calls (each packs its weight),
        # the stores grown (each moves the whole store).
        "cores_busy": cpu / seconds,
        "minor_faults": after.ru_minflt - used.ru_minflt,
        "sgemm_calls_per_iteration": (program.runtime_counter("pdg_blas_calls") - calls)
        / args.iterations,
        "grows_per_iteration": (program.runtime_counter("pdg_grows") - grows) / args.iterations,
        # The sgemm's library ($PDG_BLAS; part of the compile cache's key).
        "blas": blas_name(),
        "generation_ms": None,  # generation, reference and update in one program
        "reference_ms": None,
        "update_ms": None,
        "peak_rss_mib": peak_mib(),
        "compiled_peak_mib": trainer.peak_bytes / 2**20,  # the compiled code's own
    }


def blas_name() -> str | None:
    from pdg.lowering.toolchain import blas_library

    library = blas_library()
    return library.name if library else None


def run_torch(args) -> dict:
    import torch

    torch.set_num_threads(2)
    task, config, weights, grpo = setting(args)
    tok = task.tokenizer
    w = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    ref = {k: torch.tensor(v) for k, v in weights.items()}
    opt = torch.optim.Adam(list(w.values()), lr=3e-4)

    def forward(p, ids, valid):
        return torch_logits(p, ids, valid, config)

    rng = np.random.default_rng(0)
    gen, refs, upd = [], [], []
    for _ in range(args.iterations):
        start = time.perf_counter()
        problems = [p for p, _ in task.problems(rng, args.prompts)]
        prompts = [p for p in problems for _ in range(args.group)]
        ids, valid, width = torch_prompts(tok, prompts)
        ids, valid = torch_sample(partial(forward, w), ids, valid, args.new_tokens, tok.eos)
        completions = ids[:, width:]
        rewards = torch.tensor(
            [
                task.reward(p, tok.decode(c.tolist()))
                for p, c in zip(prompts, completions, strict=True)
            ]
        )
        gen.append(time.perf_counter() - start)
        start = time.perf_counter()
        mask = valid[:, 1:].float()
        mask[:, : width - 1] = 0.0  # completion targets only
        with torch.no_grad():
            ref_logp = torch_logp(partial(forward, ref), ids, valid)
        refs.append(time.perf_counter() - start)
        start = time.perf_counter()
        with torch.no_grad():
            old = torch_logp(partial(forward, w), ids, valid)
        logp = torch_logp(partial(forward, w), ids, valid)
        loss = torch_grpo_loss(logp, old, ref_logp, rewards, mask, args.group, grpo)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        upd.append(time.perf_counter() - start)
    return summary(gen, refs, upd)


def summary(gen, refs, upd) -> dict:
    """Medians after 2 warm-up iterations; `refs` None: no separate
    reference pass."""
    warm = 2
    g, u = statistics.median(gen[warm:]), statistics.median(upd[warm:])
    r = statistics.median(refs[warm:]) if refs else None
    return {
        "ms_per_iteration": 1e3 * (g + u + (r or 0.0)),
        "generation_ms": 1e3 * g,
        "reference_ms": None if r is None else 1e3 * r,
        "update_ms": 1e3 * u,
        "peak_rss_mib": peak_mib(),
    }


def set_native(setting: str) -> None:
    """Sets one of pdg.lowering.native's code settings (NAME=VALUE, the
    value a Python literal of the setting's type), for an A/B of a compile
    choice; ValueError for an unknown name or a value of another type."""
    from pdg.lowering import native

    name, _, text = setting.partition("=")
    if name not in native.CODE_SETTINGS:
        known = ", ".join(native.CODE_SETTINGS)
        raise ValueError(f"{name!r} is not one of pdg.lowering.native's settings ({known})")
    old = getattr(native, name)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"{text!r} is not a Python literal") from None
    if type(value) is not type(old):
        raise ValueError(f"{name} is of type {type(old).__name__}, not {type(value).__name__}")
    setattr(native, name, value)


def run_fresh(impl: str, args) -> dict | None:
    """One implementation in a new process; None when TRL is not installed."""
    if impl == "trl" and importlib.util.find_spec("trl") is None:
        print("TRL is not installed (pip install -e '.[trl]'): its row is skipped")
        return None
    cmd = [sys.executable, __file__, "--impl", impl] + ["--vectorize"] * args.vectorize
    cmd += setting_flags(args, SETTINGS)
    cmd += [f"--native={setting}" for setting in args.native]
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}

    def run(extra: list) -> dict:
        out = subprocess.run(cmd + extra, capture_output=True, text=True, env=env)
        if out.returncode != 0:
            raise SystemExit(f"grpo bench: {impl} failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    if impl not in COMPILED:
        return None if args.compile_only else run([])
    cache = ["--cache", str(args.cache)]
    key = (impl, args.new_tokens)
    if key not in COMPILES:  # the first run of this program compiles it
        COMPILES[key] = run(cache + ["--compile-only"])
    first = COMPILES[key]
    if args.compile_only:  # into the cache, for later runs (bench/grpo_calls.py)
        print(f"{impl}: compiled in {first['compile_s']:.1f} s into {args.cache}")
        if first.get("phases"):
            print("  " + ", ".join(f"{k} {v:.1f} s" for k, v in first["phases"].items()))
        return None
    return run(cache) | {"compile_s": first["compile_s"], "compile_rss_mib": first["peak_rss_mib"]}


COMPILES: dict = {}  # (impl, new tokens) -> what its compiling process reported


def median_run(results: list[dict]) -> dict:
    """The run with the median time per iteration, and every run's time."""
    ordered = sorted(results, key=lambda r: r["ms_per_iteration"])
    return ordered[(len(ordered) - 1) // 2] | {
        "runs_ms_per_iteration": [r["ms_per_iteration"] for r in results]
    }


def print_table(args, rows: dict) -> None:
    print(
        f"GRPO iteration: {args.prompts} prompts x {args.group} completions x "
        f"{args.new_tokens} new tokens, "
        + (f"{args.config}: " if args.config else "")
        + (f"vocab {args.vocab}, " if args.vocab else "")
        + f"d_model {args.d_model}, {args.layers} layers, {args.heads} heads"
        + (" (pdg vectorized)" if args.vectorize else "")
    )
    header = ("ms/iter", "generation", "reference", "update", "MiB", "compile MiB")
    print(f"{'impl':18} " + " ".join(f"{h:>{w}}" for h, w in zip(header, WIDTHS, strict=True)))
    for impl, r in rows.items():
        if r["generation_ms"] is None:  # one program: no split
            parts = ("in one", "program", "")
        else:
            ref = "in gen." if r["reference_ms"] is None else f"{r['reference_ms']:.1f}"
            parts = (f"{r['generation_ms']:.1f}", ref, f"{r['update_ms']:.1f}")
        compiling = f"{r['compile_rss_mib']:.0f}" if "compile_rss_mib" in r else "-"
        cells = (f"{r['ms_per_iteration']:.1f}", *parts, f"{r['peak_rss_mib']:.0f}", compiling)
        print(f"{impl:18} " + " ".join(f"{c:>{w}}" for c, w in zip(cells, WIDTHS, strict=True)))
    for ours in COMPILED:
        for other in ("trl", "torch"):
            if ours in rows and other in rows:
                print(
                    f"{ours} / {other}: time "
                    f"{ratio(rows, other, 'ms_per_iteration', ours):.2f}x, peak memory "
                    f"{ratio(rows, other, 'peak_rss_mib', ours):.2f}x"
                )


def ratio(rows: dict, other: str, key: str, ours: str = "pdg") -> float:
    return rows[ours][key] / rows[other][key]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_setting_args(parser, prompts=32, d_model=32, heads=2, new_tokens=3)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=1, help="fresh runs per implementation")
    parser.add_argument(
        "--vectorize", action="store_true", help="pdg: rl.SampledGRPOTrainer(vectorize=True)"
    )
    parser.add_argument("--impl", choices=CHOICES, help="run one, in this process")
    parser.add_argument(
        "--impls",
        default=",".join(IMPLS),
        help=f"the rows to run, in turn (default {','.join(IMPLS)}; also {', '.join(VARIANTS)})",
    )
    parser.add_argument("--cache", type=Path, help="pdg: the compiled artifacts' directory")
    parser.add_argument(
        "--compile-only",
        action="store_true",
        help="pdg: compile into --cache and stop (no timed runs, no results file)",
    )
    parser.add_argument("--sweep", help="response lengths to run each at, e.g. 4,8,16,32")
    parser.add_argument(
        "--native",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="pdg: compile with a setting of pdg.lowering.native changed, e.g. "
        "TRANSPOSE_TILE=0 (repeatable; part of the compile cache's key)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    resolve_setting_args(parser, args)
    for setting in args.native:
        try:
            set_native(setting)
        except ValueError as e:
            parser.error(f"--native {setting}: {e}")
    if args.impl:
        run = {
            "pdg": run_pdg,
            "pdg-one": run_pdg_one,
            # pdg_trainer() reads the arrangement off args.impl
            "pdg-one-group": run_pdg_one,
            "pdg-one-completion": run_pdg_one,
            "pdg-one-unshared": run_pdg_one,
            "pdg-one-stale1": run_pdg_one,
            "pdg-one-batched": run_pdg_one,
            "pdg-one-forced": run_pdg_one,
            "pdg-one-scored": run_pdg_one,
            "torch": run_torch,
        }.get(args.impl)
        if run is None:
            from impl_trl import run_trl as run
        print(json.dumps(run(args)))
        return
    if args.prompts % args.microbatch:
        parser.error(
            f"--prompts {args.prompts} is not a multiple of --microbatch {args.microbatch}"
        )
    impls = args.impls.split(",")
    if unknown := [i for i in impls if i not in CHOICES]:
        parser.error(f"unknown --impls {unknown}; choose from {', '.join(CHOICES)}")
    if args.cache is None:  # this invocation's own: every program is compiled once
        args.cache = Path(tempfile.mkdtemp(prefix="pdg-bench-cache-"))
    lengths = [int(n) for n in args.sweep.split(",")] if args.sweep else [args.new_tokens]
    runs = []
    for n in lengths:
        args.new_tokens = n
        # Fresh processes vary by 10-20% on this machine: with --repeat,
        # the implementations take turns and each row is the median run.
        tries: dict[str, list] = {}
        for _ in range(args.repeat):
            for impl in impls:
                if (r := run_fresh(impl, args)) is not None:
                    tries.setdefault(impl, []).append(r)
        rows = {impl: median_run(rs) for impl, rs in tries.items()}
        if args.compile_only:
            continue
        print_table(args, rows)
        runs.append({"new_tokens": n, **rows})
    if args.compile_only:
        return
    if args.sweep and ({"trl", "torch"} & set(runs[0])):
        baseline = "trl" if "trl" in runs[0] else "torch"
        ours = [impl for impl in COMPILED if impl in runs[0]]
        print(f"\n{' / '.join(ours)} time over {baseline}'s, by response length:")
        for run in runs:
            times = ", ".join(f"{ratio(run, baseline, 'ms_per_iteration', o):.2f}x" for o in ours)
            print(f"  {run['new_tokens']:3d} tokens: {times}")
    out = args.out or HERE / "results" / ("grpo-sweep.json" if args.sweep else "grpo.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    skip = ("impl", "out", "new_tokens", "cache", "compile_only", "script_model_defaults")
    config = {k: v for k, v in vars(args).items() if k not in skip}
    out.write_text(json.dumps({"config": config, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
