"""A PyTorch reward model inside the compiled GRPO program against the same
model called from a host udf.

Both runs are one compiled GRPO program (examples/reward_model_grpo.py's
policy and reward model, Adam, aligned microbatches) over the same prompts
and seeds. "in program": build_grpo(reward_model=...) scores each
microbatch's completions in the compiled code (the module imported by
torch-mlir). "host udf": build_grpo(reward=..., keyed_reward=True) calls
back into Python once per microbatch, which pads the completions and runs
the PyTorch module on them in one batch (under torch.no_grad()). Each
measurement is a fresh process that builds the program description, loads
the compiled artifact, runs it once to warm up and times a second run; the
two variants take turns, `--repeats` times each. Reported: the median time
per GRPO iteration, and how far the two variants' rewards are apart.

    python bench/reward_model.py                   # 8 iterations, 3 repeats
    python bench/reward_model.py --iterations 4 --repeats 2 --prompts 4

Prints a table and writes bench/results/reward_model.json."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "reward_model_grpo.py"
VARIANTS = ("in program", "host udf")


def example():
    spec = importlib.util.spec_from_file_location("reward_model_grpo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def host_reward(model):
    """The keyed reward udf: one batched PyTorch call per microbatch."""
    import torch

    def reward(keys, prompt_ids, completion_ids):
        lengths = [len(c) for c in completion_ids]
        ids = np.zeros((len(lengths), max(lengths)), np.int64)
        for row, c in enumerate(completion_ids):
            ids[row, : len(c)] = c
        with torch.no_grad():
            return model(torch.from_numpy(ids), torch.tensor(lengths)).numpy().tolist()

    return reward


def build(args, variant: str, model):
    """The GRPO program of one variant (its description: no compiling)."""
    from pdg import losses, optim, rl
    from pdg.nn import GPTConfig
    from pdg.programs import RewardModel, build_grpo

    task = rl.Addition(20)
    tok = task.tokenizer
    config = GPTConfig(tok.vocab, args.d_model, 1, 2, None, task.prompt_width + args.new)
    common = dict(
        eos=tok.eos,
        prompt_width=task.prompt_width,
        max_new_tokens=args.new,
        optimizer=optim.Adam(1e-2),
        microbatch=args.microbatch,
    )
    algorithm = losses.GRPOAlgorithm(group=args.group, clip=0.2, beta=0.02)
    if variant == "in program":
        program = build_grpo(config, algorithm, None, reward_model=RewardModel(model), **common)
    else:
        program = build_grpo(config, algorithm, host_reward(model), keyed_reward=True, **common)
    rng = np.random.default_rng(0)
    prompts = [
        [tok.encode(p) for p, _ in task.problems(rng, args.prompts)] for _ in range(args.iterations)
    ]
    weights = program.policy.init_weights(seed=1, scale=0.5)
    keys = None if variant == "in program" else [list(range(args.prompts))] * args.iterations
    inputs = program.inputs(weights, weights, prompts, seed=3, keys=keys)
    return program, inputs


def reward_model(args):
    import torch
    from pdg import rl

    torch.manual_seed(0)
    rm = example().EncoderRewardModel(rl.Addition(20).tokenizer.vocab, d=args.rm_d_model)
    return rm.eval()


def child(args) -> None:
    """One measurement: load, warm up, time a run; print JSON."""
    import pdg.runtime

    model = reward_model(args)
    program, inputs = build(args, args.variant, model)
    loaded = pdg.runtime.load(args.artifact)
    symbols = program.symbols(inputs)
    loaded.run(inputs, symbols, udfs=program.udfs)
    start = time.perf_counter()
    outputs = loaded.run(inputs, symbols, udfs=program.udfs).outputs
    seconds = time.perf_counter() - start
    rewards = np.asarray(outputs["reward"], np.float64)
    print(json.dumps({"seconds": seconds, "rewards": rewards.tolist()}))


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--prompts", type=int, default=8, help="prompts per iteration")
    parser.add_argument("--microbatch", type=int, default=4, help="prompts per point")
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--new", type=int, default=8, help="max_new_tokens")
    parser.add_argument("--d-model", type=int, default=32, help="the policy's width")
    parser.add_argument("--rm-d-model", type=int, default=32, help="the reward model's width")
    parser.add_argument("--repeats", type=int, default=3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options(parser)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--artifact", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        child(args)
        return
    from pdg.lowering.artifact import compile_module

    model = reward_model(args)
    passed = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for variant in VARIANTS:
            program, _ = build(args, variant, model)
            paths[variant] = Path(tmp) / f"{variant.replace(' ', '_')}.pdgx"
            compile_module(program.program.build(), paths[variant], gpu=False)
        runs = {v: [] for v in VARIANTS}
        rewards = {}
        for _ in range(args.repeats):
            for variant in VARIANTS:  # fresh processes, taking turns
                command = [sys.executable, __file__, *passed, "--variant", variant,
                           "--artifact", str(paths[variant])]  # fmt: skip
                done = subprocess.run(command, capture_output=True, text=True, env=os.environ)
                if done.returncode != 0:
                    sys.exit(f"the {variant} run failed:\n{done.stderr[-3000:]}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                runs[variant].append(result["seconds"])
                rewards[variant] = np.asarray(result["rewards"])
    apart = float(np.abs(rewards["in program"] - rewards["host udf"]).max())
    rows = []
    for variant in VARIANTS:
        per_iteration = statistics.median(runs[variant]) / args.iterations
        rows.append({"variant": variant, "seconds": runs[variant],
                     "ms_per_iteration": 1e3 * per_iteration})  # fmt: skip
    base = rows[1]["ms_per_iteration"]
    print(
        f"GRPO: {args.iterations} iterations of {args.prompts} prompts x {args.group} "
        f"completions (microbatch {args.microbatch}), up to {args.new} new tokens; "
        f"policy d={args.d_model}, reward model d={args.rm_d_model}; "
        f"{args.repeats} fresh processes each, median"
    )
    print(f"{'reward':<12} {'ms/iteration':>13} {'vs udf':>8}")
    for r in rows:
        ms = r["ms_per_iteration"]
        print(f"{r['variant']:<12} {ms:>13.2f} {base / ms:>7.2f}x")
    print(f"largest reward difference between the two: {apart:.2e}")
    out = HERE / "results" / "reward_model.json"
    out.write_text(
        json.dumps(
            {
                "options": vars(args),
                "rows": rows,
                "max_reward_difference": apart,
                "machine": platform.processor() or platform.machine(),
                "load_average": os.getloadavg(),
            },  # fmt: skip
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
