"""Scale benchmark: greedy decode of real-size models (random weights) with
pdg, PyTorch eager and Hugging Face transformers, turn about in fresh
processes, against the bandwidth floor.

    python bench/scale.py                                   # gpt2-124m, B=1, 128 tokens
    python bench/scale.py --configs qwen2.5-0.5b --batch 1 8 --attention causal window
    python bench/scale.py --impls pdg,pdg-vec,torch --batch 8
    python bench/scale.py --compile-only --configs gpt2-124m@2L gpt2-124m@12L
    python bench/scale.py --impls pdg --weights f32 bf16     # pdg and pdg-bf16 take turns

Configs (bench/scale_models.py): gpt2-124m (vocab 50257, d_model 768, 12
layers, 12 heads) and qwen2.5-0.5b (vocab 151936, d_model 896, 24 layers,
14 heads, 2 KV heads, MLP 4864, tied); `NAME@<n>L` is the same shape with
n layers. Implementations: pdg (the program compiled once per config and
attention kind, in its own process, then run through pdg.runtime), pdg-vec
(the same compiled with the batch folded into the points:
compile_module(vectorize=True)), pdg-unsplit (pdg with each step's large
matrix-vector products whole on one thread at batch 1, as before they were
split over the threads: native.SPLIT_IN_LOOP_MIN_WORK = -1), pdg-vec-blas
(pdg-vec with products of 2-8 rows calling sgemm too, native.BLAS_MIN_DIM =
2, instead of streaming the weights in pdg's kernel), torch (eager,
KV cache), hf
(transformers' generate; needs the [trl] extra's transformers).
`--weights bf16` compiles pdg and pdg-vec again with their matrices and
tables stored in bf16 (pdg.nn's weight_dtype; products sum in f32), shown
as pdg-bf16 and pdg-vec-bf16 beside the f32 runs; their floor reads half
the matrix bytes (the `floor bf16` row).

Each round runs every implementation once, each in a fresh process (its
peak memory is its own), and --repeats rounds take turns, so a change in
the machine's load hits all of them alike. A run decodes --new-tokens
steps of the batch from one-token prompts (token 1 + b for sequence b)
after a short warm-up; ms_per_token is the timed run's wall time per step
(a step decodes one token of every sequence). The floor is the larger of
(bytes a step must read: weights once, keys and values per sequence) /
measured bandwidth and (flops / measured matrix-product rate). The
bandwidth is the copy probe's at the weights' size, or, for weights
larger than its largest size, the read probe's (a matrix-vector product
over 1 GiB), since a step reads its weights and writes little.
Tokens must agree: every implementation's predictions have the same CRC.

Writes bench/results/scale.json: per run `impl`, `config`, `attention`,
`batch`, `new_tokens`, `ms_per_token`, `compile_s` (and its phases),
`peak_mib`, `tokens_crc`, the round and the load average when it started;
runs of other settings already in the file are kept. A compile also
records `cpu_s`, the CPU time of the compiler and its tools, which other
jobs on the machine do not inflate as they do the wall time."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

IMPLS = ("pdg", "pdg-vec", "pdg-unsplit", "pdg-vec-blas", "torch", "hf")
# impl -> vectorize
COMPILED = {"pdg": False, "pdg-vec": True, "pdg-unsplit": False, "pdg-vec-blas": True}
# Compiled with each sequence's products whole, on one thread
# (native.SPLIT_IN_LOOP_MIN_WORK = -1): pdg before they were split at batch 1.
UNSPLIT = {"pdg-unsplit"}
# Compiled with sgemm for products from 2 rows (native.BLAS_MIN_DIM = 2).
BLAS_FROM_2_ROWS = {"pdg-vec-blas"}
WARMUP_STEPS = 4


def pattern_of(attention: str, window: int) -> str:
    """pdg's attention pattern for --attention causal | window."""
    return "full" if attention == "causal" else f"window:{window}"


def prompts(batch: int) -> list[int]:
    return [1 + b for b in range(batch)]


def crc(tokens: np.ndarray) -> str:
    return f"{zlib.crc32(np.ascontiguousarray(tokens, np.int64).tobytes()):08x}"


def cpu_seconds() -> float:
    """CPU time of this process and the tools it ran (opt, llc): unlike the
    wall time, not inflated when other jobs share the machine."""
    own, tools = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + tools.ru_utime + tools.ru_stime


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM: exec starts it anew)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


# --- the processes ------------------------------------------------------------------


def compile_worker(spec: dict) -> dict:
    """Builds and compiles the decode program; times each phase."""
    from pdg.ir import make_context, parse_text
    from pdg.lowering.artifact import compile_module
    from scale_models import build_program, parse_config

    c = parse_config(spec["config"])
    start, cpu_start = time.perf_counter(), cpu_seconds()
    program, _ = build_program(
        c, spec["pattern"], spec["max_len"], spec["max_batch"], spec.get("weights", "f32")
    )
    text = program.to_mlir()
    module = parse_text(text, "decode", make_context())
    build_s = time.perf_counter() - start
    from pdg.lowering import native

    if spec.get("unsplit"):
        native.SPLIT_IN_LOOP_MIN_WORK = -1
    if spec.get("blas_from_2_rows"):
        native.BLAS_MIN_DIM = 2
    compiled = compile_module(
        module, Path(spec["artifact"]), gpu=False, vectorize=spec["vectorize"]
    )
    total = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start
    phases = {"build program": build_s, **compiled.seconds}
    phases |= {f"  {tool}": v for tool, v in compiled.tool_seconds.items()}  # within native code
    return {"compile_s": total, "cpu_s": cpu, "phases": phases, "peak_mib": peak_rss_mib()}


def run_worker(spec: dict) -> dict:
    """One timed decode of the batch by `spec['impl']`."""
    from scale_models import parse_config

    c = parse_config(spec["config"])
    batch, steps, max_len = spec["batch"], spec["new_tokens"], spec["max_len"]
    if spec.get("compiled"):
        seconds, tokens = _run_pdg(c, spec, batch, steps, max_len)
    elif spec["impl"] == "torch":
        from scale_torch import run_torch

        seconds, tokens = run_torch(c, spec["pattern"], prompts(batch), steps, max_len)
    else:
        from scale_torch import run_hf

        seconds, tokens = run_hf(c, spec["pattern"], prompts(batch), steps, max_len)
    return {
        "ms_per_token": 1e3 * seconds / steps,
        "peak_mib": peak_rss_mib(),
        "tokens_crc": crc(tokens),
        "tokens": int(tokens.shape[1]),
    }


def _run_pdg(c, spec: dict, batch: int, steps: int, max_len: int):
    import pdg.runtime
    from pdg.runtime.memref import ELEMENTS
    from scale_models import weights

    program = pdg.runtime.load(Path(spec["artifact"]))
    elements = {s["name"]: s["element"] for s in program.manifest["abi"]["inputs"]}
    wanted = set(elements)

    def dtype_of(path: str):
        # bf16 weights: the same f32 weights, each rounded to bf16 as made.
        return ELEMENTS[elements.get(path.replace(".", "_"), "f32")]

    inputs = {k.replace(".", "_"): v for k, v in weights(c, max_len, dtype_of=dtype_of).items()}
    inputs["prompt"] = np.array(prompts(batch), np.int64).reshape(batch, 1)
    inputs["prompt_len"] = np.ones(batch, np.int64)
    inputs = {k: v for k, v in inputs.items() if k in wanted}

    def decode(n: int):
        inputs["limit"] = np.full(batch, n, np.int64)
        return program.run(inputs, {"B": batch})

    decode(min(WARMUP_STEPS, steps))
    start = time.perf_counter()
    result = decode(steps)
    seconds = time.perf_counter() - start
    rows = result.outputs["tokens"]
    tokens = np.stack([np.asarray(r)[:steps] for r in rows])
    return seconds, tokens


def spawn(kind: str, spec: dict, timeout: float) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    load = os.getloadavg()[0]
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), f"--{kind}", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s", "load": load}
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail) or f"exit {done.returncode}", "load": load}
    return {**json.loads(lines[-1]), "load": load}


# --- the report -----------------------------------------------------------------------


def floor_ms(
    config: str, attention: str, window: int, batch: int, steps: int, rates, weights="f32"
) -> float:
    from floor import bandwidth_at
    from scale_models import matrix_params, parse_config, streamed_bytes

    c = parse_config(config)
    ctx = np.arange(1, steps + 1)
    if attention != "causal":
        ctx = np.minimum(ctx, window)
    kv = c.kv_heads * c.head_dim
    kv_bytes = 4 * 2 * c.layers * kv * float(ctx.mean()) * batch
    weight_bytes = streamed_bytes(c, steps, weights)
    bandwidth = bandwidth_at(rates, weight_bytes)
    if weight_bytes > max(rates["bytes_per_s_by_size"]):
        # Weights larger than any copy probe come from memory, and a step
        # only reads them: the read probe bounds it.
        bandwidth = max(bandwidth, rates["read_bytes_per_s"])
    seconds_bytes = (weight_bytes + kv_bytes) / bandwidth
    flops = batch * (2 * matrix_params(c) + 4 * c.layers * c.d_model * float(ctx.mean()))
    return 1e3 * max(seconds_bytes, flops / rates["flops_per_s"])


def table(runs: list[dict], floors: dict) -> list[str]:
    """floors: by (config, attention, batch, new_tokens, weights)."""
    head = (
        f"{'config':<14} {'attention':<9} {'B':>2} {'impl':<8} {'ms/token':>9} {'(min)':>8} "
        f"{'x best peer':>11} {'x floor':>7} {'compile s':>9} {'peak MiB':>8} {'tokens':>8}"
    )
    out = [head, "-" * len(head)]
    groups: dict[tuple, list[dict]] = {}
    for r in runs:
        groups.setdefault((r["config"], r["attention"], r["batch"], r["new_tokens"]), []).append(r)
    for key, rs in groups.items():
        config, attention, batch, _ = key
        by_impl: dict[str, list[dict]] = {}
        for r in rs:
            by_impl.setdefault(r["impl"], []).append(r)
        medians = {
            impl: statistics.median(x["ms_per_token"] for x in xs if "error" not in x)
            for impl, xs in by_impl.items()
            if any("error" not in x for x in xs)
        }
        crcs = {x["tokens_crc"] for xs in by_impl.values() for x in xs if "error" not in x}
        for impl, xs in by_impl.items():
            ok = [x for x in xs if "error" not in x]
            if not ok:
                out.append(
                    f"{config:<14} {attention:<9} {batch:>2} {impl:<8} failed: {xs[0]['error']}"
                )
                continue
            med = medians[impl]
            peers = [m for other, m in medians.items() if other != impl]
            ratio = f"{med / min(peers):.2f}" if peers else "-"
            comp = ok[0].get("compile_s")
            comp = f"{comp:.1f}" if comp is not None else ""
            agree = "" if len(crcs) == 1 else " DIFFER"
            out.append(
                f"{config:<14} {attention:<9} {batch:>2} {impl:<8} {med:9.2f} "
                f"{min(x['ms_per_token'] for x in ok):8.2f} {ratio:>11} "
                f"{med / floors[(*key, ok[0].get('weights', 'f32'))]:7.2f} {comp:>9} "
                f"{max(x['peak_mib'] for x in ok):8.0f} "
                f"{ok[0]['tokens_crc']:>8}{agree}"
            )
        for weights in ("f32", "bf16"):
            if (*key, weights) in floors and (
                weights == "f32" or any(r.get("weights") == weights for r in rs)
            ):
                name = "floor" if weights == "f32" else f"floor {weights}"
                out.append(
                    f"{config:<14} {attention:<9} {batch:>2} {name:<8} "
                    f"{floors[(*key, weights)]:9.2f}"
                )
    return out


def label_of(impl: str, weights: str) -> str:
    """pdg with bf16 weights shows as pdg-bf16."""
    return impl if weights == "f32" else f"{impl}-{weights}"


def write(path: Path, runs: list[dict], machine: dict) -> None:
    """Replaces the file's runs of the settings measured now; keeps others."""
    keys = {(r["config"], r["attention"], r["batch"], r["new_tokens"]) for r in runs}
    kept = []
    if path.exists():
        try:
            old = json.loads(path.read_text())
            kept = [
                r
                for r in old.get("runs", [])
                if (r["config"], r["attention"], r["batch"], r["new_tokens"]) not in keys
            ]
        except (ValueError, KeyError, TypeError):
            kept = []
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"machine": machine, "runs": kept + runs}, indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="+", default=["gpt2-124m"])
    parser.add_argument("--attention", nargs="+", default=["causal"], choices=["causal", "window"])
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--batch", type=int, nargs="+", default=[1])
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument(
        "--impls", default="pdg,torch,hf", help=f"comma-separated: {','.join(IMPLS)}"
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds of fresh processes")
    parser.add_argument(
        "--weights",
        nargs="+",
        default=["f32"],
        choices=["f32", "bf16"],
        help="pdg's weights: f32, bf16 (impls pdg-bf16, pdg-vec-bf16), or both in turns",
    )
    parser.add_argument("--compile-only", action="store_true", help="only compile pdg; phases")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "scale.json")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--compile", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.run:
        print(json.dumps(run_worker(json.loads(args.run))))
        return 0
    if args.compile:
        print(json.dumps(compile_worker(json.loads(args.compile))))
        return 0

    from scale_models import parse_config

    impls = [x for x in args.impls.split(",") if x]
    bad = [x for x in impls if x not in IMPLS]
    if bad:
        parser.error(f"unknown impls {bad}; choose from {', '.join(IMPLS)}")
    for name in args.configs:
        parse_config(name)
    if args.new_tokens < 1 or min(args.batch) < 1:
        parser.error("--new-tokens and --batch must be positive")
    if args.compile_only:
        impls = [x for x in impls if x in COMPILED] or ["pdg"]
    # (impl, weights) in turn order; only pdg's builds take bf16 weights.
    labels = [
        (impl, weights)
        for impl in impls
        for weights in (args.weights if impl in COMPILED else ["f32"])
    ]

    from floor import measure_rates, read_bandwidth

    started = time.perf_counter()
    rates = {**measure_rates(), "read_bytes_per_s": read_bandwidth()}
    machine = {
        "cores": os.cpu_count(),
        "load_at_start": os.getloadavg(),
        "flops_per_s": rates["flops_per_s"],
        "bytes_per_s_by_size": {str(k): v for k, v in rates["bytes_per_s_by_size"].items()},
        "read_bytes_per_s": rates["read_bytes_per_s"],
    }
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
        f"{rates['flops_per_s'] / 1e9:.1f} GFLOP/s; "
        f"{max(rates['bytes_per_s_by_size'].items())[1] / 1e9:.1f} GB/s copied at 256 MiB, "
        f"{rates['read_bytes_per_s'] / 1e9:.1f} GB/s read at 1 GiB (a matrix-vector product)",
        flush=True,
    )
    scratch = Path(tempfile.mkdtemp(prefix="pdg-scale-"))
    runs, floors, compiles = [], {}, []
    try:
        for config in args.configs:
            for attention in args.attention:
                pattern = pattern_of(attention, args.window)
                base = {
                    "config": config,
                    "attention": attention,
                    "pattern": pattern,
                    "new_tokens": args.new_tokens,
                    "max_len": args.new_tokens,
                }
                compiled = {}
                for impl, weights in labels:
                    if impl not in COMPILED:
                        continue
                    label = label_of(impl, weights)
                    artifact = scratch / f"{config}-{attention}-{label}.pdgx"
                    spec = {
                        **base,
                        "artifact": str(artifact),
                        "vectorize": COMPILED[impl],
                        "unsplit": impl in UNSPLIT,
                        "blas_from_2_rows": impl in BLAS_FROM_2_ROWS,
                        "max_batch": max(args.batch),
                        "weights": weights,
                    }
                    info = spawn("compile", spec, args.timeout)
                    compiled[label] = (info, artifact)
                    compiles.append({"impl": label, "weights": weights, **base, **info})
                    shown = (
                        f"{info['compile_s']:.1f} s, {info['cpu_s']:.1f} s CPU ("
                        + ", ".join(f"{k} {v:.1f}" for k, v in info["phases"].items())
                        + f"), peak {info['peak_mib']:.0f} MiB"
                        if "error" not in info
                        else info["error"]
                    )
                    print(f"compiled {label} {config} {attention}: {shown}", flush=True)
                if args.compile_only:
                    continue
                for batch in args.batch:
                    key = (config, attention, batch, args.new_tokens)
                    for weights in args.weights:
                        floors[(*key, weights)] = floor_ms(
                            config, attention, args.window, batch, args.new_tokens, rates, weights
                        )
                    for round_ in range(args.repeats):
                        for impl, weights in labels:
                            label = label_of(impl, weights)
                            record = {
                                "impl": label,
                                **base,
                                "batch": batch,
                                "round": round_,
                                "weights": weights,
                            }
                            if impl in COMPILED:
                                record["compiled"] = True
                                info, artifact = compiled[label]
                                if "error" in info:
                                    runs.append({**record, "error": info["error"]})
                                    continue
                                record["artifact"] = str(artifact)
                                record["compile_s"] = info["compile_s"]
                                record["compile_phases"] = info["phases"]
                            result = spawn("run", record, args.timeout)
                            record.pop("artifact", None)
                            record.update(result)
                            record["floor_ms"] = floors[(*key, weights)]
                            runs.append(record)
                            shown = (
                                f"{result['ms_per_token']:.2f} ms/token, "
                                f"{result['peak_mib']:.0f} MiB, {result['tokens_crc']}"
                                if "error" not in result
                                else result["error"]
                            )
                            print(
                                f"  {config} {attention} B={batch} {label} round {round_}: "
                                f"{shown} (load {result['load']:.1f})",
                                flush=True,
                            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if compiles:
        print()
        for c in compiles:
            print(
                f"compile {c['impl']:<8} {c['config']:<16} {c['attention']:<7} "
                + (
                    f"{c['compile_s']:6.1f} s {c['cpu_s']:6.1f} s CPU"
                    if "error" not in c
                    else c["error"]
                )
            )
    if runs:
        print()
        print("\n".join(table(runs, floors)))
        machine["compiles"] = compiles
        write(args.out, runs, machine)
        print(f"wrote {args.out}")
    elif compiles:
        path = args.out.with_name("scale-compile.json")
        write_compiles(path, compiles, machine)
        print(f"wrote {path}")
    print(f"benchmark took {time.perf_counter() - started:.0f} s")
    return 0


def write_compiles(path: Path, compiles: list[dict], machine: dict) -> None:
    """--compile-only: the compile records, replacing those of the same
    settings."""
    keys = {(c["impl"], c["config"], c["attention"], c["max_len"]) for c in compiles}
    kept = []
    if path.exists():
        try:
            kept = [
                c
                for c in json.loads(path.read_text()).get("compiles", [])
                if (c["impl"], c["config"], c["attention"], c["max_len"]) not in keys
            ]
        except (ValueError, KeyError, TypeError):
            kept = []
    path.write_text(json.dumps({"machine": machine, "compiles": kept + compiles}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
