"""Memory of LoRA against full fine-tuning in the GRPO program: the same
Llama-shaped model and batch built both ways (programs.build_grpo with and
without lora=), compiled, and run in fresh processes taking turns. Per
way: the compiler's planned peak (its memory report, inputs included),
the runtime's measured peak of stores and inputs, the process's peak RSS,
and the time per iteration.

    python bench/lora.py                              # d 512, 4 layers, vocab 8192
    python bench/lora.py --d-model 256 --layers 2 --repeat 3

Writes bench/results/lora.json."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

PROMPTS, GROUP, NEW, ITERATIONS = 4, 4, 16, 2


def build(args, lora: bool):
    from pdg import losses, optim, rl
    from pdg.nn import DecoderConfig, LoraSpec
    from pdg.programs import build_grpo

    config = DecoderConfig(
        vocab=args.vocab,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.d_model // 64,
        positions="rotary",
        norm="rmsnorm",
        gated_mlp=True,
        activation="silu",
        qkv_bias=False,
        o_bias=False,
        mlp_bias=False,
        tie_embeddings=False,
        d_ff=args.d_model * 11 // 4,
        max_positions=64,
    )
    targets = tuple(f"h{i}.attn.{x}" for i in range(args.layers) for x in "qv")
    spec = LoraSpec(args.rank, 2.0 * args.rank, targets) if lora else None
    task = rl.Addition(10)
    program = build_grpo(
        config,
        losses.GRPOAlgorithm(group=GROUP, beta=0.04),
        lambda prompt, completion: float(completion[0] % 2),
        eos=task.tokenizer.eos,
        prompt_width=task.prompt_width,
        max_new_tokens=NEW,
        optimizer=optim.AdamW(1e-4),
        microbatch=PROMPTS,
        lora=spec,
    )
    return program, task, spec


def child(args) -> None:
    """Runs one way once (the artifact compiled by the parent) and prints
    its measurements as JSON."""
    import resource

    import numpy as np
    from pdg.nn.lora import init_adapters
    from pdg.runtime import load

    lora = args.child == "lora"
    program, task, spec = build(args, lora)
    base = program.policy.init_weights(seed=0)
    rng = np.random.default_rng(1)
    prompts = [
        [task.tokenizer.encode(p) for p, _ in task.problems(rng, PROMPTS)]
        for _ in range(ITERATIONS)
    ]
    if lora:
        weights = {**base, **init_adapters(spec, base, seed=0)}
        inputs = program.inputs(weights, None, prompts, seed=3)
    else:
        inputs = program.inputs(base, dict(base), prompts, seed=3)
    loaded = load(args.artifact)
    symbols = program.symbols(inputs)
    planned, _, _ = loaded.planned_peak(symbols)
    began = time.perf_counter()
    ran = loaded.run(inputs, symbols, udfs=program.udfs)
    seconds = (time.perf_counter() - began) / ITERATIONS
    trained = sum(int(np.prod(p.shape)) for p in program.training.params.values())
    adapters = set(spec.adapter_paths()) if lora else set()
    print(
        json.dumps(
            {
                "planned_bytes": int(planned),
                "measured_bytes": int(ran.peak_bytes),
                "rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "seconds_per_iteration": seconds,
                "trained_parameters": trained,
                "parameters": sum(int(v.size) for k, v in base.items() if k not in adapters),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2, help="turns of each way")
    parser.add_argument("--out", default=str(HERE / "results" / "lora.json"))
    parser.add_argument("--child", choices=["lora", "full"], help=argparse.SUPPRESS)
    parser.add_argument("--artifact", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from pdg.lowering.artifact import compile_module

    work = Path(tempfile.mkdtemp(prefix="pdg-bench-lora-"))
    artifacts = {}
    for way in ("full", "lora"):
        began = time.perf_counter()
        artifacts[way] = work / f"{way}.pdgx"
        compile_module(build(args, way == "lora")[0].program.build(), artifacts[way], gpu=False)
        print(f"compiled {way} in {time.perf_counter() - began:.1f} s", file=sys.stderr)
    runs: dict[str, list[dict]] = {"full": [], "lora": []}
    shape = [f"--d-model={args.d_model}", f"--layers={args.layers}", f"--vocab={args.vocab}"]
    for _ in range(args.repeat):
        for way in ("full", "lora"):
            done = subprocess.run(
                [sys.executable, __file__, *shape, f"--rank={args.rank}", "--child", way]
                + ["--artifact", str(artifacts[way])],
                capture_output=True,
                text=True,
                check=True,
            )
            runs[way].append(json.loads(done.stdout.strip().splitlines()[-1]))
    mib = 2**20
    rows = []
    print(f"load average {os.getloadavg()[0]:.1f}; {ITERATIONS} iterations of {PROMPTS}x{GROUP}")
    print("| way | trained params | planned MiB | measured MiB | peak RSS MiB | s/iteration |")
    print("| --- | --- | --- | --- | --- | --- |")
    for way in ("full", "lora"):
        r = runs[way]
        row = {
            "way": way,
            "trained_parameters": r[0]["trained_parameters"],
            "parameters": r[0]["parameters"],
            "planned_mib": r[0]["planned_bytes"] / mib,
            "measured_mib": max(x["measured_bytes"] for x in r) / mib,
            "rss_mib": min(x["rss_bytes"] for x in r) / mib,
            "seconds_per_iteration": min(x["seconds_per_iteration"] for x in r),
        }
        rows.append(row)
        print(
            f"| {way} | {row['trained_parameters']:,} of {row['parameters']:,} | "
            f"{row['planned_mib']:.1f} | {row['measured_mib']:.1f} | {row['rss_mib']:.1f} | "
            f"{row['seconds_per_iteration']:.2f} |"
        )
    full, lora = rows
    ratios = {k: lora[k] / full[k] for k in ("planned_mib", "measured_mib", "rss_mib")}
    print(
        f"LoRA / full: planned {ratios['planned_mib']:.2f}x, "
        f"measured {ratios['measured_mib']:.2f}x, RSS {ratios['rss_mib']:.2f}x"
    )
    Path(args.out).write_text(
        json.dumps({"args": vars(args), "load": os.getloadavg()[0], "rows": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
