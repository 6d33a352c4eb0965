"""Plot several runs of examples/grpo_arith.py on one figure: each run's
held-out greedy accuracy (points every 25 iterations) and its samples'
mean reward (a moving average), e.g. the synchronous program against one
sampling a step behind:

    python examples/grpo_arith.py --one-program --out runs/sync
    python examples/grpo_arith.py --one-program --staleness 1 --out runs/stale1
    python examples/compare_runs.py runs/sync runs/stale1 --out runs/compare.png

A run is its --out directory (or its log.jsonl); its label is the
directory's name unless --labels names them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def read_log(path: Path) -> list[dict]:
    """The rows of a run's log.jsonl (`path` the file or its directory)."""
    if path.is_dir():
        path = path / "log.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def moving_average(values: list[float], window: int) -> list[float]:
    out, total = [], 0.0
    for k, v in enumerate(values):
        total += v
        if k >= window:
            total -= values[k - window]
        out.append(total / min(k + 1, window))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories or log.jsonl files")
    parser.add_argument("--labels", nargs="+", help="one per run (default: directory names)")
    parser.add_argument("--window", type=int, default=25, help="reward moving-average width")
    parser.add_argument("--out", type=Path, default=Path("compare.png"))
    args = parser.parse_args()
    if args.labels and len(args.labels) != len(args.runs):
        parser.error(f"{len(args.labels)} labels for {len(args.runs)} runs")
    labels = args.labels or [(r if r.is_dir() else r.parent).name for r in args.runs]
    try:
        logs = [read_log(run) for run in args.runs]
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("error: the plot needs matplotlib (pip install matplotlib)", file=sys.stderr)
        return 1
    fig, ax = plt.subplots(figsize=(7, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (label, rows) in enumerate(zip(labels, logs, strict=True)):
        color = colors[k % len(colors)]
        steps = [r["step"] for r in rows]
        if "reward" in rows[0]:
            reward = moving_average([r["reward"] for r in rows], args.window)
            ax.plot(steps, reward, color=color, alpha=0.45, label=f"{label}: mean reward")
        held = [(r["step"], r["held_out"]) for r in rows if "held_out" in r]
        if held:
            ax.plot(*zip(*held, strict=True), "o-", color=color, ms=3, label=f"{label}: held-out")
            print(
                f"{label}: held-out accuracy {held[0][1]:.3f} (step {held[0][0]}) -> "
                f"{held[-1][1]:.3f} (step {held[-1][0]})"
            )
    ax.set_xlabel("iteration")
    ax.set_ylabel("accuracy / reward")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
