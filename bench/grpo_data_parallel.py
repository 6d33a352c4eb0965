"""GRPO data-parallel: the same GRPO iterations (same global batch, seed,
model and constants) on one process with 2 threads and on 2 ranks with 1
thread each, in pdg (GRPO as one compiled program, rl.GRPOProgramTrainer;
on 2 ranks the program split over them, GRPOProgram.data_parallel(), each
rank running half of every iteration's microbatches and all-reducing the
gradients through MPI) and in PyTorch eager (grpo_common's GRPO, the same
math as bench/grpo.py's PyTorch row; on 2 ranks wrapped in
torch.nn.parallel.DistributedDataParallel over gloo, each rank sampling
and scoring half of the prompts' groups).

    python bench/grpo_data_parallel.py                      # 16 prompts x 8, d_model 128
    python bench/grpo_data_parallel.py --repeats 3 --d-model 64

Rows: pdg-one and torch, each 1 process x 2 threads and 2 ranks x 1
thread (both 2-rank rows launched by the `mpi` extra's mpiexec; PyTorch's
ranks find each other over TCP on localhost). Each row runs in a fresh
process (or job), the rows taking turns, --repeats times; a run warms up
with 2 iterations, then times --iterations (the ranks start together, the
slowest rank's time counts). pdg's programs are compiled first, by
processes of their own, into a cache directory the timed runs load from
(--cache DIR keeps it for the next invocation).
Prints a table (median and best ms per iteration) and the ratios, with
`uptime`'s load at the start and the end, and writes
bench/results/grpo_data_parallel.json."""

from __future__ import annotations

import argparse
import json
import os
import socket
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
WARM_UP = 2
LR = 3e-4
# (row, implementation, ranks, threads per rank)
ROWS = (
    ("pdg-one 1x2", "pdg", 1, 2),
    ("pdg-one 2x1", "pdg", 2, 1),
    ("torch 1x2", "torch", 1, 2),
    ("torch DDP 2x1", "torch", 2, 1),
)
SETTINGS = ("vocab", "prompts", "group", "d_model", "layers", "heads", "new_tokens", "iterations",
            "microbatch")  # fmt: skip


def batches(task, prompts: int, count: int, rng) -> list[list[str]]:
    """`count` iterations' prompts: every rank draws the whole batch's."""
    return [[p for p, _ in task.problems(rng, prompts)] for _ in range(count)]


def world():
    """(rank, ranks) of this process: mpiexec's, or (0, 1)."""
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", 0))
    return rank, int(os.environ.get("OMPI_COMM_WORLD_SIZE", 1))


def run_pdg(args) -> dict | None:
    from pdg import rl

    task, config, weights, grpo = setting(args)
    comm = None
    if world()[1] > 1:
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
    trainer = rl.GRPOProgramTrainer(
        config, grpo, task.reward, task.tokenizer, task.prompt_width, args.new_tokens,
        lr=LR, cache=args.cache, microbatch=args.microbatch, comm=comm,
    )  # fmt: skip
    if args.compile_only:
        return {"compile_s": trainer.compile_seconds["grpo"], "peak_rss_mib": peak_mib()}
    rng = np.random.default_rng(0)
    state, _ = trainer.run(trainer.start(weights), batches(task, args.prompts, WARM_UP, rng))
    timed = batches(task, args.prompts, args.iterations, rng)
    if comm is not None:
        comm.Barrier()
    start = time.perf_counter()
    trainer.run(state, timed)
    seconds = time.perf_counter() - start
    if comm is not None:
        seconds = comm.allreduce(seconds, op=MPI.MAX)
        if comm.Get_rank():
            return None
    return {"ms_per_iteration": 1e3 * seconds / args.iterations, "peak_rss_mib": peak_mib()}


def run_torch(args) -> dict | None:
    """PyTorch GRPO; on several ranks each samples its share of the
    prompts and DistributedDataParallel averages the gradients of the
    ranks' mean losses: the gradient of the whole batch's mean."""
    import torch
    import torch.distributed as dist

    rank, ranks = world()
    torch.set_num_threads(args.threads)
    torch.manual_seed(rank)
    task, config, weights, grpo = setting(args)
    tok = task.tokenizer

    class Policy(torch.nn.Module):
        """The weights as parameters (a ParameterDict takes no dots)."""

        def __init__(self):
            super().__init__()
            self.w = torch.nn.ParameterDict(
                {
                    k.replace(".", "/"): torch.nn.Parameter(torch.tensor(v))
                    for k, v in weights.items()
                }
            )

        def forward(self, ids, valid):
            p = {k.replace("/", "."): v for k, v in self.w.items()}
            return torch_logits(p, ids, valid, config)

    policy = Policy()
    train = policy
    if ranks > 1:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=rank, world_size=ranks
        )
        train = torch.nn.parallel.DistributedDataParallel(policy)
    ref = {k: torch.tensor(v) for k, v in weights.items()}
    opt = torch.optim.Adam(policy.parameters(), lr=LR)
    share = args.prompts // ranks

    def iteration(problems: list[str]) -> None:
        mine = problems[rank * share : (rank + 1) * share]
        prompts = [p for p in mine for _ in range(args.group)]
        ids, valid, width = torch_prompts(tok, prompts)
        ids, valid = torch_sample(policy, ids, valid, args.new_tokens, tok.eos)
        rewards = torch.tensor(
            [
                task.reward(p, tok.decode(c.tolist()))
                for p, c in zip(prompts, ids[:, width:], strict=True)
            ]
        )
        mask = valid[:, 1:].float()
        mask[:, : width - 1] = 0.0  # completion targets only
        with torch.no_grad():
            ref_logp = torch_logp(partial(torch_logits, ref, config=config), ids, valid)
            old = torch_logp(policy, ids, valid)
        logp = torch_logp(train, ids, valid)  # DDP: the backward all-reduces
        loss = torch_grpo_loss(logp, old, ref_logp, rewards, mask, args.group, grpo)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()

    rng = np.random.default_rng(0)
    for problems in batches(task, args.prompts, WARM_UP, rng):
        iteration(problems)
    timed = batches(task, args.prompts, args.iterations, rng)
    if ranks > 1:
        dist.barrier()
    start = time.perf_counter()
    for problems in timed:
        iteration(problems)
    seconds = torch.tensor(time.perf_counter() - start, dtype=torch.float64)
    if ranks > 1:
        dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
        dist.destroy_process_group()
        if rank:
            return None
    return {"ms_per_iteration": 1e3 * float(seconds) / args.iterations, "peak_rss_mib": peak_mib()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_fresh(args, row: str, extra: tuple[str, ...] = ()) -> dict:
    """One row's run in a new process, or a job of 2 ranks."""
    _, impl, ranks, threads = next(r for r in ROWS if r[0] == row)
    command = [sys.executable, __file__, "--impl", impl, "--threads", str(threads)]
    command += setting_flags(args, SETTINGS)
    command += ["--cache", str(args.cache), "--port", str(free_port()), *extra]
    env = os.environ | {
        "PDG_NUM_THREADS": str(threads),
        "OMP_NUM_THREADS": str(threads),
        "OPENBLAS_NUM_THREADS": "1",  # NumPy's idle pool would spin on the cores
    }
    if ranks > 1:
        mpiexec = Path(sys.executable).parent / "mpiexec"
        # Unbound, as the one process is: on a machine shared with other
        # work, a rank pinned to a busy core could not move off it.
        command = [str(mpiexec), "-n", str(ranks), "--oversubscribe", "--bind-to", "none",
                   *command]  # fmt: skip
        # Open MPI runs as root only when told twice.
        env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"grpo_data_parallel: {row} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_setting_args(parser, prompts=16, d_model=128, heads=4, new_tokens=8)
    parser.add_argument("--iterations", type=int, default=10, help="timed, after 2 to warm up")
    parser.add_argument("--repeats", type=int, default=3, help="fresh runs per row")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "grpo_data_parallel.json")
    # a run's own options
    parser.add_argument("--impl", choices=("pdg", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument(
        "--cache", type=Path, help="pdg: a directory of compiled artifacts to reuse (default: new)"
    )
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--compile-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    resolve_setting_args(parser, args)
    if args.impl:
        result = (run_pdg if args.impl == "pdg" else run_torch)(args)
        if result is not None:  # rank 0 reports
            print(json.dumps(result))
        return
    # Every rank holds whole microbatches, and every microbatch whole groups.
    if args.prompts % (2 * args.microbatch):
        parser.error(f"--prompts {args.prompts} is not a multiple of 2 x --microbatch")
    started = load()
    if args.cache is None:  # this invocation's own: every program is compiled once
        args.cache = Path(tempfile.mkdtemp(prefix="pdg-bench-dp-cache-"))
    compile_s = {}
    for row in ("pdg-one 1x2", "pdg-one 2x1"):
        compile_s[row] = run_fresh(args, row, ("--compile-only",))["compile_s"]
        print(f"compiled {row}'s program in {compile_s[row]:.0f} s (0: found in --cache)")
    runs: dict[str, list[dict]] = {row[0]: [] for row in ROWS}
    for k in range(args.repeats):  # the rows take turns
        for row, *_ in ROWS:
            runs[row].append(run_fresh(args, row))
            print(f"  repeat {k}: {row}: {runs[row][-1]['ms_per_iteration']:.1f} ms")
    ended = load()
    rows = {}
    for row, impl, ranks, threads in ROWS:
        times = [r["ms_per_iteration"] for r in runs[row]]
        rows[row] = {
            "impl": impl,
            "ranks": ranks,
            "threads_per_rank": threads,
            "median_ms": statistics.median(times),
            "best_ms": min(times),
            "runs_ms": times,
            "peak_rss_mib_rank0": statistics.median(r["peak_rss_mib"] for r in runs[row]),
        }
    ratios = {
        "pdg-one 2x1 / pdg-one 1x2": ("pdg-one 2x1", "pdg-one 1x2"),
        "torch DDP 2x1 / torch 1x2": ("torch DDP 2x1", "torch 1x2"),
        "pdg-one 1x2 / torch 1x2": ("pdg-one 1x2", "torch 1x2"),
        "pdg-one 2x1 / torch DDP 2x1": ("pdg-one 2x1", "torch DDP 2x1"),
    }
    print(
        f"GRPO iteration: {args.prompts} prompts x {args.group} completions x up to "
        f"{args.new_tokens} new tokens, d_model {args.d_model}, {args.layers} layers, "
        f"{args.heads} heads; {args.iterations} iterations timed; {args.repeats} runs per row"
    )
    print(f"load (uptime): {started} at the start, {ended} at the end")
    print(f"{'row':16} {'ranks x threads':>15} {'median ms':>10} {'best ms':>8}  runs")
    for row, r in rows.items():
        shape = f"{r['ranks']} x {r['threads_per_rank']}"
        runs_ms = ", ".join(f"{t:.1f}" for t in r["runs_ms"])
        print(f"{row:16} {shape:>15} {r['median_ms']:>10.1f} {r['best_ms']:>8.1f}  {runs_ms}")
    table = {}
    for name, (a, b) in ratios.items():
        table[name] = {
            "median": rows[a]["median_ms"] / rows[b]["median_ms"],
            "best": rows[a]["best_ms"] / rows[b]["best_ms"],
        }
        print(f"{name}: {table[name]['median']:.2f}x (median), {table[name]['best']:.2f}x (best)")
    config = {name: getattr(args, name) for name in (*SETTINGS, "repeats")}
    result = {"config": config, "load_start": started, "load_end": ended,
              "compile_s": compile_s, "rows": rows, "ratios": table}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
