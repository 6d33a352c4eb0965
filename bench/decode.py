"""Decode benchmark: pdg against JAX (static and dynamic), PyTorch eager
and the floor, side by side.

    python bench/decode.py                       # the default grid, ~10 min on 2 cores
    python bench/decode.py --lengths 256 --impls pdg torch
    pdg bench decode --d-model 512 --layers 4       # the same, from the command line

Every configuration runs in a fresh process (so peak memory is its own);
pdg compiles once per attention kind and runs every length from that one
artifact. Prints a table, writes results/decode.jsonl and
results/decode.png (time per token and peak memory against length), and
checks the targets of issue 7: identical tokens, flat window memory, pdg
fastest, within 3x of the floor, memory at or below JAX dynamic's."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import Config, Result  # noqa: E402

IMPLS = ["pdg", "jax-static-step", "jax-static-loop", "jax-dynamic", "torch"]


def worker(config: Config, artifact: str | None) -> Result:
    if config.impl == "pdg":
        import impl_pdg

        return impl_pdg.run(config, Path(artifact))
    if config.impl == "torch":
        import impl_torch

        return impl_torch.run(config)
    import impl_jax

    return impl_jax.run(config, config.impl.removeprefix("jax-"))


def spawn(args: list[str], timeout: float) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        return {"error": " | ".join(tail) or f"exit {done.returncode}"}
    return json.loads(lines[-1])


def table(rows: list[dict], floors: dict) -> str:
    head = (
        f"{'attention':<9} {'T':>5} {'impl':<16} {'ms/token':>9} {'x floor':>8} "
        f"{'compile s':>9} {'peak MiB':>9} {'tokens':>9}  notes"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        c = r["config"]
        floor = floors[(c["attention"], c["length"])]["ms_per_token"]
        if "error" in r:
            out.append(f"{c['attention']:<9} {c['length']:>5} {c['impl']:<16} failed: {r['error']}")
            continue
        ms = r["ms_per_token"]
        comp = "" if r["compile_s"] is None else f"{r['compile_s']:.2f}"
        out.append(
            f"{c['attention']:<9} {c['length']:>5} {c['impl']:<16} {ms:9.4f} {ms / floor:8.1f} "
            f"{comp:>9} {r['peak_rss_mib']:9.1f} {r['tokens_crc']:>9}  {'; '.join(r['notes'])}"
        )
    for (attention, length), f in sorted(floors.items()):
        out.append(f"{attention:<9} {length:>5} {'floor':<16} {f['ms_per_token']:9.4f}")
    return "\n".join(out)


def targets(rows: list[dict], floors: dict) -> list[str]:
    """Issue 7's targets, each with how far it is met or missed."""
    ok = [r for r in rows if "error" not in r]
    by = {(r["config"]["impl"], r["config"]["attention"], r["config"]["length"]): r for r in ok}
    lines = []
    for (impl, attention, length), r in sorted(by.items()):
        if impl != "pdg":
            continue
        torch = by.get(("torch", attention, length))
        if torch:
            same = torch["tokens_crc"] == r["tokens_crc"]
            lines.append(
                f"[{'met' if same else 'MISSED'}] {attention} T={length}: tokens "
                f"{'identical to' if same else 'differ from'} PyTorch's"
            )
        others = [by[k] for k in by if k[1:] == (attention, length) and k[0] != "pdg"]
        for o in others:
            if o["config"]["length"] != length or o["tokens"] != r["tokens"]:
                continue
            ratio = r["ms_per_token"] / o["ms_per_token"]
            lines.append(
                f"[{'met' if ratio < 1 else 'MISSED'}] {attention} T={length}: pdg "
                f"time/token is {ratio:.2f}x {o['config']['impl']}'s"
            )
        floor = floors[(attention, length)]["ms_per_token"]
        x = r["ms_per_token"] / floor
        lines.append(
            f"[{'met' if x <= 3 else 'MISSED'}] {attention} T={length}: pdg is "
            f"{x:.2f}x the floor (target <= 3x)"
        )
        dyn = by.get(("jax-dynamic", attention, length))
        if dyn:
            m = r["peak_rss_mib"] / dyn["peak_rss_mib"]
            lines.append(
                f"[{'met' if m <= 1 else 'MISSED'}] {attention} T={length}: pdg peak "
                f"memory is {m:.2f}x JAX dynamic's"
            )
    window = sorted((k[2], r) for k, r in by.items() if k[0] == "pdg" and k[1] == "window")
    if len(window) > 1:
        (short, a), (long, b) = window[0], window[-1]
        grow = b["extra"]["runtime_peak_mib"] / a["extra"]["runtime_peak_mib"] - 1
        lines.append(
            f"[{'met' if grow <= 0.05 else 'MISSED'}] window: pdg's own peak at "
            f"T={long} is {100 * grow:+.1f}% of T={short} (target within 5%)"
        )
        rss = b["peak_rss_mib"] / a["peak_rss_mib"] - 1
        lines.append(f"       (process peak RSS {100 * rss:+.1f}%)")
        t = b["ms_per_token"] / a["ms_per_token"] - 1
        lines.append(
            f"[{'met' if abs(t) <= 0.15 else 'MISSED'}] window: pdg time/token at "
            f"T={long} is {100 * t:+.1f}% of T={short} (flat in length)"
        )
    return lines


def plot(rows: list[dict], floors: dict, path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install -e .[bench])"
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    for col, attention in enumerate(["causal", "window"]):
        for impl in IMPLS:
            pts = sorted(
                (r["config"]["length"], r)
                for r in rows
                if "error" not in r
                and r["config"]["impl"] == impl
                and r["config"]["attention"] == attention
            )
            if not pts:
                continue
            xs = [p[0] for p in pts]
            axes[0][col].plot(xs, [p[1]["ms_per_token"] for p in pts], marker="o", label=impl)
            axes[1][col].plot(xs, [p[1]["peak_rss_mib"] for p in pts], marker="o", label=impl)
        fl = sorted((k[1], v["ms_per_token"]) for k, v in floors.items() if k[0] == attention)
        if fl:
            axes[0][col].plot([a for a, _ in fl], [b for _, b in fl], "k--", label="floor")
        axes[0][col].set_title(f"{attention}: time per token")
        axes[0][col].set_ylabel("ms / token")
        axes[0][col].set_yscale("log")
        axes[1][col].set_title(f"{attention}: peak memory (process RSS)")
        axes[1][col].set_ylabel("MiB")
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("length T")
            if ax.get_lines():
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return f"wrote {path}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--attention", nargs="+", default=["causal", "window"])
    parser.add_argument("--impls", nargs="+", default=IMPLS, choices=IMPLS)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--compile", help=argparse.SUPPRESS)
    parser.add_argument("--artifact", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        config = Config(**json.loads(args.worker))
        print(worker(config, args.artifact).to_json())
        return 0
    if args.compile:
        import impl_pdg

        config = Config(**json.loads(args.compile))
        print(json.dumps({"compile_s": impl_pdg.compile_artifact(config, Path(args.artifact))}))
        return 0

    from floor import measure_rates, per_token

    args.out.mkdir(parents=True, exist_ok=True)
    base = Config(
        impl="pdg",
        attention="causal",
        length=max(args.lengths),
        window=args.window,
        d_model=args.d_model,
        layers=args.layers,
        heads=args.heads,
        vocab=args.vocab,
        batch=args.batch,
        max_length=max(args.lengths),
    )
    started = time.perf_counter()
    rates = measure_rates()
    copies = ", ".join(
        f"{n >> 20} MiB {r / 1e9:.0f}" for n, r in sorted(rates["bytes_per_s_by_size"].items())
    )
    print(
        f"machine: {rates['flops_per_s'] / 1e9:.1f} GFLOP/s float32 matrix product; "
        f"copy GB/s by size: {copies}"
    )
    rows, floors, compiled = [], {}, {}
    for attention in args.attention:
        if "pdg" in args.impls:
            artifact = args.out / f"decode-{attention}.pdgx"
            cfg = replace(base, attention=attention)
            compiled[attention] = (
                spawn(
                    ["--compile", json.dumps(asdict(cfg)), "--artifact", str(artifact)],
                    args.timeout,
                ),
                artifact,
            )
            print(f"pdg compiled {attention}: {compiled[attention][0]}")
        for length in args.lengths:
            floors[(attention, length)] = per_token(
                replace(base, attention=attention, length=length), rates
            )
            for impl in args.impls:
                cfg = replace(base, impl=impl, attention=attention, length=length)
                extra = []
                if impl != "pdg" and args.batch != 1:
                    rows.append(
                        {
                            "config": asdict(cfg),
                            "error": "not run: the baselines decode one sequence (batch 1)",
                        }
                    )
                    continue
                if impl == "jax-dynamic" and attention == "causal" and length > min(args.lengths):
                    # Capped at every length (each step recompiles): run once.
                    rows.append(
                        {
                            "config": asdict(cfg),
                            "error": "not run: each step "
                            f"recompiles; see T={min(args.lengths)} (capped)",
                        }
                    )
                    continue
                if impl == "pdg":
                    info, artifact = compiled[attention]
                    if "error" in info:
                        rows.append({"config": asdict(cfg), "error": info["error"]})
                        continue
                    extra = ["--artifact", str(artifact)]
                try:
                    row = spawn(["--worker", json.dumps(asdict(cfg)), *extra], args.timeout)
                except subprocess.TimeoutExpired:
                    row = {"error": f"timed out after {args.timeout:.0f} s"}
                row.setdefault("config", asdict(cfg))
                if impl == "pdg" and "error" not in row:
                    row["compile_s"] = compiled[attention][0]["compile_s"]
                rows.append(row)
                shown = row.get("ms_per_token")
                print(
                    f"  {cfg.key():<28} "
                    + (f"{shown:.4f} ms/token" if shown else row.get("error", ""))
                )
    print()
    print(table(rows, floors))
    print()
    for line in targets(rows, floors):
        print(line)
    with open(args.out / "decode.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
        for (attention, length), fl in sorted(floors.items()):
            f.write(
                json.dumps(
                    {
                        "config": {"impl": "floor", "attention": attention, "length": length},
                        **fl,
                        "flops_per_s": rates["flops_per_s"],
                    }
                )
                + "\n"
            )
    print(f"wrote {args.out / 'decode.jsonl'}")
    print(plot(rows, floors, args.out / "decode.png"))
    print(f"benchmark took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
