"""What data parallelism costs in communication at real sizes, from the
compiler's own formula.

For each model shape, builds the GRPO one program (one iteration, Adam),
splits its prompt dim over a worker dim (`GRPOProgram.data_parallel()`,
pdg-split-over-workers), and reads the memory report's communication
formula: the bytes each rank hands MPI per iteration. Then projects the
time of that all-reduce on N ranks over a network of a stated bandwidth
(a ring all-reduce sends 2 (N - 1) / N times the payload per rank, and
takes 2 (N - 1) latency steps), against each rank's share of the compute
of a fixed global batch, to say where adding ranks stops paying.

    python bench/dp_projection.py [--bandwidth-gbs 12.5] [--flops 1e12]

Nothing here is measured on a cluster: the bandwidth, latency and per-rank
compute are inputs, printed with the table; the bytes are the compiler's.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

RANKS = (8, 64, 512)


def configs():
    from pdg.nn import DecoderConfig

    return {
        "gpt2-124m": DecoderConfig(
            vocab=50257, d_model=768, n_layers=12, n_heads=12, max_positions=1024
        ),
        "qwen2.5-0.5b": DecoderConfig(
            vocab=151936, d_model=896, n_layers=24, n_heads=14, n_kv_heads=2, d_ff=4864,
            max_positions=32768, positions="rotary", rope_theta=1e6, norm="rmsnorm",
            norm_eps=1e-6, activation="silu", gated_mlp=True, qkv_bias=True, o_bias=False,
            mlp_bias=False, tie_embeddings=True,
        ),
    }  # fmt: skip


def communication(config) -> tuple[str, int, int, float]:
    """(formula, bytes per iteration, parameters, seconds to build) of the
    split GRPO program's all-reduces for `config`."""
    from pdg import losses, optim
    from pdg.analysis.graph import read_graph
    from pdg.analysis.memory import communication_lines, peak
    from pdg.programs import build_grpo
    from pdg.runtime.formula import evaluate, formula

    start = time.perf_counter()
    program = build_grpo(
        config,
        losses.GRPOAlgorithm(group=4),
        lambda prompt, completion: 0.0,
        eos=0,
        prompt_width=8,
        max_new_tokens=8,
        optimizer=optim.Adam(1e-5),
    )
    module = program.data_parallel()
    graph_op = next(op for op in module.body.operations if op.operation.name == "pdg.graph")
    total = peak(communication_lines(read_graph(graph_op.operation)))
    per_iteration = evaluate(total, {"I": 1})
    params = sum(math.prod(shape) for shape in program.policy.whole_shapes().values())
    return formula(total), per_iteration, params, time.perf_counter() - start


def ring_seconds(payload: int, ranks: int, bandwidth: float, latency: float) -> float:
    return 2 * (ranks - 1) / ranks * payload / bandwidth + 2 * (ranks - 1) * latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bandwidth-gbs", type=float, default=12.5, help="per rank, GB/s")
    parser.add_argument("--latency-us", type=float, default=5.0, help="per message step")
    parser.add_argument("--flops", type=float, default=1e12, help="one rank's f32 FLOP/s")
    parser.add_argument(
        "--tokens", type=int, default=256 * 1024, help="tokens in one iteration's global batch"
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "dp_projection.json")
    args = parser.parse_args()
    bandwidth, latency = args.bandwidth_gbs * 1e9, args.latency_us * 1e-6
    print(
        f"network {args.bandwidth_gbs} GB/s per rank, {args.latency_us} us per step; "
        f"a rank computes {args.flops:.3g} FLOP/s; {args.tokens} tokens per iteration; "
        "compute = 8 FLOP per parameter and token (a forward to sample, a forward and "
        "backward to train: 2 + 6)"
    )
    records = []
    for name, config in configs().items():
        text, payload, params, built = communication(config)
        compute = 8 * params * args.tokens / args.flops  # one rank alone
        print(f"\n{name}: {params / 1e6:.1f}M parameters; the split program's formula "
              f"(built in {built:.0f} s): {text} bytes to MPI per rank "
              f"= {payload / 1e6:.1f} MB per iteration (I=1)")  # fmt: skip
        print(f"  {'ranks':>6} {'all-reduce s':>13} {'compute s':>10} {'comm share':>11}")
        for n in RANKS:
            comm = ring_seconds(payload, n, bandwidth, latency)
            share = compute / n
            print(f"  {n:>6} {comm:13.3f} {share:10.3f} {comm / (comm + share):10.0%}")
            records.append(
                dict(config=name, ranks=n, bytes_per_rank=payload, allreduce_s=comm,
                     compute_s=share, params=params, formula=text)
            )  # fmt: skip
        # Past this N the all-reduce (which does not shrink with N) takes
        # longer than a rank's compute (which does): unless the two overlap,
        # more ranks add little.
        n = 2
        while n < 2**20 and ring_seconds(payload, n, bandwidth, latency) < compute / n:
            n *= 2
        print(f"  the all-reduce outlasts a rank's compute from N = {n} ranks")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                    "records": records}, indent=1))  # fmt: skip
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
