"""GRPO on small additions ("17+25=" -> "42"), every part compiled by pdg.

    python examples/grpo_arith.py                    # defaults: a few minutes on 2 cores
    python examples/grpo_arith.py --sft-steps 60 --grpo-steps 40
    python examples/grpo_arith.py --algorithm rloo   # RLOO instead (leave-one-out baseline)
    python examples/grpo_arith.py --algorithm ppo    # PPO: a critic, GAE, 4 epochs per batch
    python examples/grpo_arith.py --algorithm dpo    # DPO: the sum chosen, a near miss rejected
    python examples/grpo_arith.py --one-program      # GRPO's whole loop as one compiled program
    python examples/grpo_arith.py --one-program --staleness 1   # sampling one update behind
    mpiexec -n 2 python -m mpi4py examples/grpo_arith.py --one-program   # data-parallel, 2 ranks

1. Supervised fine-tuning (the train_lm program, loss on the answer only)
   starts the policy, so that the reward is not zero at the start.
2. GRPO: each iteration samples `group` completions of each prompt with
   the compiled decode program (seeded per iteration), scores them with a
   Python reward (the exact sum), and runs the compiled GRPO update
   (advantages, clipped surrogate, KL to the SFT model, gradients, Adam).
   With --one-program, all of that is one compiled program
   (rl.GRPOProgramTrainer) that runs 25 iterations per call, stepping the
   completions of 4 prompts (--microbatch) as one block. With
   --algorithm ppo (rl.PPOTrainer), the compiled values program gives a
   critic's values at the samples, and one call of the compiled PPO update
   runs --epochs updates of the policy and the critic over the batch (GAE,
   clipped surrogate and value losses; the KL to the SFT model shapes the
   per-token rewards). With --algorithm dpo (rl.PairwiseDPOTrainer), no sampling:
   pairs of the exact sum (chosen) and a near miss (rejected), 25 compiled
   DPO updates per call. --staleness K (with --one-program): iteration i
   samples with the weights of iteration i - K and the loss corrects with
   the clipped ratio to them (off-policy GRPO, build_grpo(staleness=)).
Held-out greedy accuracy is measured before and after; a JSONL log and a
PNG plot of reward and response length per iteration are written
(--save-weights FILE.safetensors also writes the trained policy).

Under mpiexec (the `mpi` extra; docs/parallel.md), --one-program runs
data-parallel: every rank runs this script with the same seed, the GRPO
program is split over the ranks (pdg-split-over-workers), each rank runs
its share of every iteration's microbatches, and every rank takes the step
of the whole batch: the weights are those of one process, to float32
rounding. Rank 0 prints and writes the files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pdg.runtime
from pdg import optim, rl
from pdg.losses import DPOAlgorithm, GRPOAlgorithm, PPOConfig, RLOOAlgorithm
from pdg.lowering.artifact import compile_module
from pdg.nn import GPTConfig
from pdg.programs import build_train_lm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=20, help="operands in [0, limit)")
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--sft-steps", type=int, default=150)
    parser.add_argument("--grpo-steps", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=32, help="prompts per iteration")
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--beta", type=float, default=0.02)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--algorithm", choices=["grpo", "rloo", "ppo", "dpo"], default="grpo")
    parser.add_argument("--epochs", type=int, default=4, help="ppo: updates per batch")
    parser.add_argument("--dpo-beta", type=float, default=0.5, help="dpo: the margin's scale")
    parser.add_argument(
        "--one-program", action="store_true", help="GRPO's whole loop in one compiled program"
    )
    parser.add_argument(
        "--microbatch", type=int, default=4, help="--one-program: prompts per aligned microbatch"
    )
    parser.add_argument(
        "--staleness",
        type=int,
        default=0,
        help="--one-program: iteration i samples with the weights of iteration i - K",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("grpo_arith"))
    parser.add_argument(
        "--save-weights", type=Path, help="write the trained policy here (.safetensors)"
    )
    args = parser.parse_args()
    if args.staleness and not (args.one_program and args.algorithm == "grpo"):
        parser.error("--staleness needs --one-program (GRPO as one compiled program)")
    if args.staleness < 0:
        parser.error(f"--staleness must be 0 or more iterations, got {args.staleness}")
    comm = communicator(parser, args)
    if comm is not None and comm.Get_rank() > 0:
        sys.stdout = open(os.devnull, "w")  # rank 0 reports

    task = rl.Addition(args.limit)
    tok = task.tokenizer
    length = task.prompt_width + task.answer_width
    config = GPTConfig(
        vocab=tok.vocab,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=2,
        max_positions=length,
    )
    rng = np.random.default_rng(args.seed)
    held_out = task.problems(np.random.default_rng(10_000 + args.seed), 128)
    work = Path(tempfile.mkdtemp(prefix="pdg-grpo-arith-"))

    # 1. Supervised fine-tuning, one compiled program for all its steps.
    sft = build_train_lm(
        config, 32, length, optim.AdamW(3e-3, weight_decay=0.0), clip_norm=1.0, masked=True
    )
    start = time.perf_counter()
    compile_module(sft.program.build(), work / "sft.pdgx", gpu=False)
    problems = task.problems(rng, 32 * args.sft_steps)
    tokens, targets, mask = task.supervised(problems, length)
    shape = (args.sft_steps, 32, length)
    weights = sft.model.init_weights(seed=args.seed, scale=0.2)
    result = pdg.runtime.load(work / "sft.pdgx").run(
        sft.inputs(
            weights, tokens.reshape(shape), targets.reshape(shape), loss_mask=mask.reshape(shape)
        ),
        symbols={"I": args.sft_steps},
    )
    weights, _ = sft.training.final_state(result.outputs)
    losses = np.asarray(result.outputs["loss"])
    print(
        f"SFT: {args.sft_steps} steps in {time.perf_counter() - start:.1f} s (compile included), "
        f"loss {losses[:5].mean():.3f} -> {losses[-5:].mean():.3f}"
    )

    if args.algorithm == "dpo":
        train_dpo(args, task, config, weights, held_out, rng, work)
        return

    # 2. GRPO from the SFT policy (also the frozen reference).
    start = time.perf_counter()
    if args.one_program and args.algorithm != "grpo":
        parser.error("--one-program runs GRPO")
    if args.one_program and args.prompts % args.microbatch:
        parser.error(f"--prompts must be a multiple of --microbatch ({args.microbatch})")
    if args.algorithm == "ppo":  # the KL to the reference shapes its per-token rewards
        grpo = PPOConfig(group=args.group, temperature=args.temperature)
        make_trainer = rl.PPOTrainer
        options = {"epochs": args.epochs, "kl_coef": args.beta}
    else:
        make = GRPOAlgorithm if args.algorithm == "grpo" else RLOOAlgorithm
        grpo = make(group=args.group, beta=args.beta, temperature=args.temperature)
        make_trainer = rl.GRPOProgramTrainer if args.one_program else rl.SampledGRPOTrainer
        # The one program steps the groups of --microbatch prompts together.
        options = {"microbatch": args.microbatch} if args.one_program else {}
        if args.staleness:
            options["staleness"] = args.staleness
        if comm is not None:
            options["comm"] = comm
    trainer = make_trainer(
        config,
        grpo,
        task.reward,
        tok,
        task.prompt_width,
        task.answer_width,
        lr=args.lr,
        workdir=work,
        **options,
    )
    name = args.algorithm.upper()
    what = "the GRPO program" if args.one_program else f"sampling and the {name} update"
    stale = getattr(getattr(trainer, "program", None), "staleness", 0)
    if stale:
        what += f" (sampling {stale} update{'s' * (stale > 1)} behind)"
    print(f"compiled {what} and greedy decoding in {time.perf_counter() - start:.1f} s")
    before = trainer.evaluate(weights, held_out)
    print(f"held-out accuracy after SFT: {before:.3f}")
    state = trainer.start(weights)
    args.out.mkdir(parents=True, exist_ok=True)
    reporting = comm is None or comm.Get_rank() == 0
    log = (args.out / "log.jsonl").open("w") if reporting else open(os.devnull, "w")
    history = []
    progress = rl.ProgressBar(args.grpo_steps)
    start = time.perf_counter()
    chunk = 25 if args.one_program else 1  # iterations per call
    for first in range(0, args.grpo_steps, chunk):
        count = min(chunk, args.grpo_steps - first)
        batches = [[p for p, _ in task.problems(rng, args.prompts)] for _ in range(count)]
        if args.one_program:
            state, steps = trainer.run(state, batches)
        else:
            state, stats = trainer.step(state, batches[0])
            steps = [stats]
        for stats in steps:
            k = stats.step
            row = {
                "step": k,
                "reward": stats.reward,
                "kl": stats.kl,
                "length": stats.length,
                "loss": stats.loss,
                "staleness": stale,  # the compiled program's
                **{f"{n}_s": v for n, v in stats.seconds.items()},
            }
            if (k + 1) % 25 == 0 or k + 1 == args.grpo_steps:
                row["held_out"] = trainer.evaluate(state.weights, held_out)
            progress.update(
                reward=stats.reward, kl=stats.kl, length=stats.length, **held_out_of(history, row)
            )
            history.append(row)
            log.write(json.dumps(row) + "\n")
    log.close()
    after = trainer.evaluate(state.weights, held_out)
    per_step = (time.perf_counter() - start) / max(args.grpo_steps, 1)
    print(f"{args.algorithm.upper()}: {args.grpo_steps} iterations, {1e3 * per_step:.1f} ms each")
    print(f"held-out accuracy: {before:.3f} -> {after:.3f} ({after - before:+.3f})")
    if comm is not None and comm.Get_rank() > 0:
        return  # every rank holds the same weights: rank 0 writes
    written = [args.out / "log.jsonl"]
    if args.save_weights:
        from safetensors.numpy import save_file

        save_file(
            {k: np.ascontiguousarray(v) for k, v in state.weights.items()}, str(args.save_weights)
        )
        written.append(args.save_weights)
    if plot(history, args.out / "reward.png", args.algorithm.upper()):
        written.append(args.out / "reward.png")
    print(f"wrote {' and '.join(map(str, written))}")


def communicator(parser, args):
    """MPI.COMM_WORLD when mpiexec started this script as one of several
    ranks (--one-program only), else None."""
    from pdg.runtime.mpi import launched_size

    if (launched_size() or 1) == 1:
        return None
    if not args.one_program or args.algorithm != "grpo":
        parser.error("under mpiexec, only GRPO with --one-program runs data-parallel")
    try:
        from mpi4py import MPI
    except ImportError:
        parser.error("several ranks need mpi4py: pip install -e '.[mpi]'")
    comm = MPI.COMM_WORLD
    points = args.prompts // args.microbatch
    if points % comm.Get_size():
        parser.error(
            f"--prompts / --microbatch = {points} microbatches per iteration do not split "
            f"evenly over {comm.Get_size()} ranks"
        )
    return comm


def train_dpo(args, task, config, weights, held_out, rng, work: Path) -> None:
    """DPO from the SFT policy (also its reference) on preference pairs
    made from the task: the exact sum chosen, a near miss (off by 1 to 3)
    rejected; --prompts pairs per update, 25 updates per call of the
    compiled update."""
    start = time.perf_counter()
    trainer = rl.PairwiseDPOTrainer(
        config,
        DPOAlgorithm(beta=args.dpo_beta),
        task.tokenizer,
        task.prompt_width,
        task.answer_width,
        lr=args.lr,
        reward=task.reward,
        workdir=work,
    )
    print(f"compiled the DPO update and greedy decoding in {time.perf_counter() - start:.1f} s")
    before = trainer.evaluate(weights, held_out)
    print(f"held-out accuracy after SFT: {before:.3f}")

    def pair(prompt: str, answer: str) -> tuple[str, str, str]:
        offsets = [k for k in (-3, -2, -1, 1, 2, 3) if int(answer) + k >= 0]
        return prompt, answer, str(int(answer) + int(rng.choice(offsets)))

    state = trainer.start(weights)
    args.out.mkdir(parents=True, exist_ok=True)
    history, progress = [], rl.ProgressBar(args.grpo_steps)
    start = time.perf_counter()
    for first in range(0, args.grpo_steps, 25):
        count = min(25, args.grpo_steps - first)
        batches = [[pair(*pa) for pa in task.problems(rng, args.prompts)] for _ in range(count)]
        state, losses = trainer.run(state, batches)
        for k, loss in enumerate(losses):
            row = {"step": first + k, "loss": float(loss)}
            if k == count - 1:
                row["held_out"] = trainer.evaluate(state.weights, held_out)
            progress.update(loss=float(loss), **held_out_of(history, row))
            history.append(row)
    after = trainer.evaluate(state.weights, held_out)
    per_step = (time.perf_counter() - start) / max(args.grpo_steps, 1)
    print(f"DPO: {args.grpo_steps} updates, {1e3 * per_step:.1f} ms each")
    print(f"held-out accuracy: {before:.3f} -> {after:.3f} ({after - before:+.3f})")
    with (args.out / "log.jsonl").open("w") as log:
        log.writelines(json.dumps(row) + "\n" for row in history)
    written = [args.out / "log.jsonl"]
    if plot(history, args.out / "reward.png", "DPO"):
        written.append(args.out / "reward.png")
    print(f"wrote {' and '.join(map(str, written))}")


def held_out_of(history: list[dict], row: dict) -> dict:
    """The latest held-out accuracy, for the progress line."""
    for r in [row, *reversed(history)]:
        if "held_out" in r:
            return {"held_out": r["held_out"]}
    return {}


def plot(history: list[dict], path: Path, algorithm: str) -> bool:
    """Reward and length per iteration as a PNG; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return False
    steps = [h["step"] for h in history]
    fig, ax = plt.subplots(figsize=(7, 4))
    sampled = "reward" in history[0]  # DPO samples nothing: its loss instead
    if sampled:
        ax.plot(steps, [h["reward"] for h in history], label="mean reward (samples)", alpha=0.6)
    held = [(h["step"], h["held_out"]) for h in history if "held_out" in h]
    if held:
        ax.plot(*zip(*held, strict=True), "o-", label="held-out accuracy (greedy)")
    ax.set_xlabel(f"{algorithm} iteration")
    ax.set_ylabel("reward")
    right = ax.twinx()
    if sampled:
        right.plot(steps, [h["length"] for h in history], color="gray", alpha=0.4, label="length")
        right.set_ylabel("completion length (tokens)")
    else:
        right.plot(steps, [h["loss"] for h in history], color="gray", alpha=0.4, label="loss")
        right.set_ylabel("DPO loss")
    ax.set_zorder(right.get_zorder() + 1)  # the rewards over the length line
    ax.patch.set_visible(False)
    lines = ax.get_lines() + right.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


if __name__ == "__main__":
    main()
