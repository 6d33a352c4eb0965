"""The GRPO program's reward callback alone: the time its host udf takes
per iteration to cut each row's completion and score it, with the
arithmetic task's reward and character tokenizer (bench/grpo.py's
setting: 32 prompts x 8 completions, in microbatches of 4 prompts).

The callback runs on the calling thread while the pool's other threads
wait, so its time adds to every iteration whole.

    python bench/reward_udf.py                      # 4 and 32 new tokens
    python bench/reward_udf.py --new-tokens 8 --repeats 50

Tokens are random ids, EOS among them, so rows end at many lengths.
Prints a table and writes bench/results/reward_udf.json with the load."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from pdg.programs.grpo import _scorer
from pdg.rl.arith import Addition

HERE = Path(__file__).resolve().parent


def iteration_ms(new_tokens: int, repeats: int, prompts=32, group=8, microbatch=4) -> float:
    """The best of `repeats` iterations' worth of reward calls (one call per
    microbatch), in ms."""
    task = Addition()
    tok = task.tokenizer
    rng = np.random.default_rng(0)

    def reward_of_ids(prompt_ids, completion_ids) -> float:  # as GRPOProgramTrainer's
        return task.reward(tok.decode(prompt_ids), tok.decode(completion_ids))

    score = _scorer(reward_of_ids, np.float32, (tok.eos,), new_tokens, group, True)
    calls = []
    for _ in range(prompts // microbatch):
        texts = [p for p, _ in task.problems(rng, microbatch)]
        ids = np.full((microbatch, task.prompt_width), tok.eos, np.int64)
        lengths = np.array([len(t) for t in texts])
        for k, text in enumerate(texts):
            ids[k, : len(text)] = tok.encode(text)
        steps = task.prompt_width + new_tokens
        tokens = rng.integers(0, tok.vocab, (steps, microbatch * group))
        calls.append((ids, lengths, tokens))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for call in calls:
            score(*call)
        best = min(best, time.perf_counter() - start)
    return 1e3 * best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new-tokens", type=int, nargs="+", default=[4, 32])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "reward_udf.json")
    args = parser.parse_args()
    rows = [{"new_tokens": n, "ms_per_iteration": iteration_ms(n, args.repeats)}
            for n in args.new_tokens]
    print("new tokens  reward udf ms per iteration (32 prompts x 8)")
    for r in rows:
        print(f"{r['new_tokens']:>10}  {r['ms_per_iteration']:.2f}")
    args.out.write_text(json.dumps({"load": os.getloadavg(), "runs": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
