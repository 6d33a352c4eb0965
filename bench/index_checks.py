"""What the bounds checks on data-dependent indices cost (pdg-check-indices):
the decode benchmark's program compiled with and without them, run in
fresh processes taking turns, time per token of each and their ratio.

    python bench/index_checks.py                      # causal and window, 512 tokens
    python bench/index_checks.py --lengths 256 --repeat 5

Writes bench/results/index_checks.json."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import Config  # noqa: E402


def compile_both(config: Config, out: Path) -> dict[str, Path]:
    import impl_pdg

    paths = {}
    for build in ("checked", "unchecked"):
        paths[build] = out / f"{config.attention}-{build}.pdgx"
        impl_pdg.compile_artifact(config, paths[build], check_indices=build == "checked")
    return paths


def time_one(config: Config, path: Path) -> float:
    """ms per token, in a fresh process."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import impl_pdg; "
        "from common import Config; c = Config(**json.loads(sys.argv[2])); "
        "print(impl_pdg.run(c, __import__('pathlib').Path(sys.argv[3])).ms_per_token)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(HERE), json.dumps(config.__dict__), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512])
    parser.add_argument("--attention", nargs="+", default=["causal", "window"])
    parser.add_argument("--repeat", type=int, default=3, help="turns of each build")
    parser.add_argument("--out", default=str(HERE / "results" / "index_checks.json"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for attention in args.attention:
            base = Config(impl="pdg", attention=attention, length=max(args.lengths))
            paths = compile_both(base, Path(tmp))
            for length in args.lengths:
                config = replace(base, length=length)
                times: dict[str, list[float]] = {"checked": [], "unchecked": []}
                for _ in range(args.repeat):  # turns: checked, unchecked, ...
                    for build, path in paths.items():
                        times[build].append(time_one(config, path))
                best = {build: min(t) for build, t in times.items()}
                median = {build: statistics.median(t) for build, t in times.items()}
                rows.append(
                    {
                        "attention": attention,
                        "length": length,
                        "checked_ms": best["checked"],
                        "unchecked_ms": best["unchecked"],
                        "ratio_best": best["checked"] / best["unchecked"],
                        "ratio_median": median["checked"] / median["unchecked"],
                        "runs": times,
                    }
                )
    print(f"{'attention':<10} {'tokens':>6} {'checked ms':>11} {'unchecked ms':>13} "
          f"{'ratio (best)':>13} {'ratio (median)':>15}")  # fmt: skip
    for r in rows:
        print(
            f"{r['attention']:<10} {r['length']:>6} {r['checked_ms']:>11.3f} "
            f"{r['unchecked_ms']:>13.3f} {r['ratio_best']:>13.3f} {r['ratio_median']:>15.3f}"
        )
    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
