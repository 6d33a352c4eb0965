"""One GRPO update on given samples (the build_rl_step program), compiled
as is and with the prompt dim folded into the point type (pdg-vectorize):
time per step, compile time, and the largest difference between the two.

    python bench/rl_step.py                  # 32 prompts x 8 completions x 9 tokens
    python bench/rl_step.py --prompts 8

Prints a table and writes results/rl_step.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--length", type=int, default=9)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "rl_step.json")
    args = parser.parse_args()
    from pdg.losses import GRPOAlgorithm
    from pdg.lowering.artifact import compile_module
    from pdg.nn import GPTConfig
    from pdg.programs import build_rl_step
    from pdg.runtime import load

    P, G, L = args.prompts, args.group, args.length
    config = GPTConfig(vocab=13, d_model=32, n_layers=2, n_heads=2, max_positions=L)
    step = build_rl_step(config, L, GRPOAlgorithm(group=G))
    rng = np.random.default_rng(0)
    inputs = {
        **step.policy.inputs_from(step.policy.init_weights(seed=0, scale=0.3)),
        **step.reference.inputs_from(step.reference.init_weights(seed=1, scale=0.3)),
        "tokens": rng.integers(0, 13, size=(P, G, L)),
        "targets": rng.integers(0, 13, size=(P, G, L)),
        "mask": (rng.random((P, G, L)) < 0.5).astype(np.float32),
        "old_logp": (rng.normal(size=(P, G, L)) - 2.5).astype(np.float32),
        "rewards": rng.integers(0, 2, size=(P, G)).astype(np.float32),
    }
    rows, outputs = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, vectorize in (("per point", False), ("vectorized over p", "p")):
            start = time.perf_counter()
            compile_module(step.program.build(), Path(tmp) / name, gpu=False, vectorize=vectorize)
            compile_s = time.perf_counter() - start
            program = load(Path(tmp) / name)
            program.run(inputs, symbols={"P": P})  # warm-up
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                outputs[name] = program.run(inputs, symbols={"P": P}).outputs
                times.append(time.perf_counter() - start)
            rows[name] = {"ms_per_step": 1e3 * min(times), "compile_s": compile_s}
    a, b = outputs["per point"], outputs["vectorized over p"]
    diff = max(float(np.abs(np.asarray(a[k]) - np.asarray(b[k])).max()) for k in a)
    print(f"GRPO update: {P} prompts x {G} completions x {L} tokens, d_model 32, 2 layers")
    print(f"{'':20} {'ms/step':>8} {'compile s':>10}")
    for name, r in rows.items():
        print(f"{name:20} {r['ms_per_step']:8.1f} {r['compile_s']:10.1f}")
    print(f"largest output difference: {diff:.2e}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "max_difference": diff}, indent=2) + "\n")


if __name__ == "__main__":
    main()
