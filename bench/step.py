"""The decode step in detail: pdg's time per token against NumPy's time for
the same matrix-vector products (issue 5's target: within 2x), a batch of 8
compiled per sequence and vectorized (pdg-vectorize), and the runtime's
peak memory against the compiler's plan (issue 6: within 10%).

    python bench/step.py [--length 256] [--out bench/results]

Prints a table and writes results/step.json. Ratios are within one run;
this machine is noisy."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import Config, weights  # noqa: E402


def _median_time(fn, repeats: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _compile(config: Config, pattern: str, max_len: int, vectorize: bool, path: Path):
    from pdg.ir import make_context, parse_text
    from pdg.lowering.artifact import compile_module
    from pdg.nn import AttentionPattern, GPTConfig
    from pdg.programs import build_decode

    cfg = GPTConfig(
        vocab=config.vocab,
        d_model=config.d_model,
        n_layers=config.layers,
        n_heads=config.heads,
        max_positions=max_len,
        pattern=AttentionPattern.parse(pattern),
    )
    decode = build_decode(
        cfg, eos=-1, max_len=max_len, prompt_width=1, response_limit=True, output_logits=False
    )
    module = parse_text(decode.program.to_mlir(), "decode", make_context())
    compile_module(module, path, gpu=False, vectorize=vectorize)
    import pdg.runtime

    return pdg.runtime.load(path)


def _inputs(config: Config, batch: int, length: int) -> dict:
    inputs = {p.replace(".", "_"): w for p, w in weights(config).items()}
    inputs["prompt"] = np.ones((batch, 1), np.int64)
    inputs["prompt_len"] = np.ones(batch, np.int64)
    inputs["limit"] = np.full(batch, length, np.int64)
    return inputs


def numpy_matvecs(config: Config) -> float:
    """Seconds NumPy (BLAS) takes for one token's matrix-vector products."""
    d, f, v = config.d_model, 4 * config.d_model, config.vocab
    rng = np.random.default_rng(0)
    shapes = [(d, d)] * 4 + [(d, f), (f, d)]
    mats = [rng.standard_normal(s).astype(np.float32) for s in shapes] * config.layers
    mats.append(rng.standard_normal((d, v)).astype(np.float32))
    vecs = {n: rng.standard_normal(n).astype(np.float32) for n in (d, f)}

    def step():
        for m in mats:
            vecs[m.shape[0]] @ m

    return _median_time(step, repeats=200)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--length", type=int, default=256)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    config = Config(impl="pdg", attention="window", length=args.length, max_length=4096)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        single = _compile(config, "window:64", 4096, False, Path(tmp) / "one.pdgx")
        vectorized = _compile(config, "window:64", 4096, True, Path(tmp) / "vec.pdgx")
        one = _inputs(config, 1, args.length)
        step = _median_time(lambda: single.run(one, {"B": 1})) / args.length
        blas = numpy_matvecs(config)
        rows.append(
            {
                "what": "decode step, B=1",
                "pdg_ms": 1e3 * step,
                "numpy_matvec_ms": 1e3 * blas,
                "ratio": step / blas,
            }
        )
        many = _inputs(config, args.batch, args.length)
        looped = _median_time(lambda: single.run(many, {"B": args.batch})) / args.length
        batched = _median_time(lambda: vectorized.run(many, {"B": args.batch})) / args.length
        rows.append(
            {
                "what": f"decode step, B={args.batch}",
                "per_sequence_ms": 1e3 * looped,
                "vectorized_ms": 1e3 * batched,
                "ratio": batched / looped,
            }
        )
        for pattern in ("window:64", "full"):
            program = (
                single
                if pattern == "window:64"
                else _compile(config, pattern, 4096, False, Path(tmp) / "full.pdgx")
            )
            for length in (args.length, 4096):
                result = program.run(_inputs(config, 1, length), {"B": 1})
                planned, _, _ = program.planned_peak({"B": 1, "T": length})
                rows.append(
                    {
                        "what": f"peak memory, {pattern}, T={length}",
                        "runtime_bytes": result.peak_bytes,
                        "planned_bytes": planned,
                        "ratio": result.peak_bytes / planned,
                    }
                )
    for r in rows:
        values = ", ".join(f"{k} {v:.4g}" for k, v in r.items() if k != "what")
        print(f"{r['what']:<32} {values}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "step.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out / 'step.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
