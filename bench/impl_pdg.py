"""pdg in the decode benchmark: the reference decode program compiled once
per attention kind (bound 4096, a response limit given when run), then run
through the runtime for each length without recompiling. The worker
imports only NumPy and pdg.runtime."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from common import PROMPT, Config, Result, crc, peak_rss_mib, weights


def compile_artifact(config: Config, path: Path, **options) -> float:
    """Builds and compiles the program (in the parent's helper process);
    `options` go to compile_module."""
    from pdg.ir import make_context, parse_text
    from pdg.lowering.artifact import compile_module
    from pdg.nn import AttentionPattern, GPTConfig
    from pdg.programs import build_decode

    cfg = GPTConfig(
        vocab=config.vocab,
        d_model=config.d_model,
        n_layers=config.layers,
        n_heads=config.heads,
        max_positions=config.max_length,
        pattern=AttentionPattern.parse(config.pattern),
    )
    decode = build_decode(
        cfg,
        eos=-1,
        max_len=config.max_length,
        prompt_width=len(PROMPT),
        max_batch=max(config.batch, 1),
        response_limit=True,
        output_logits=False,
    )
    start = time.perf_counter()
    compile_module(
        parse_text(decode.program.to_mlir(), "decode", make_context()), path, gpu=False, **options
    )
    return time.perf_counter() - start


def run(config: Config, artifact: Path, repeats: int = 3) -> Result:
    import pdg.runtime

    program = pdg.runtime.load(artifact)
    inputs = {path.replace(".", "_"): w for path, w in weights(config).items()}
    b = config.batch
    inputs["prompt"] = np.array([PROMPT] * b, np.int64)
    inputs["prompt_len"] = np.full(b, len(PROMPT), np.int64)
    inputs["limit"] = np.full(b, config.length, np.int64)
    times, result = [], None
    for _ in range(repeats + 1):  # the first run warms caches and pages
        start = time.perf_counter()
        result = program.run(inputs, {"B": b})
        times.append(time.perf_counter() - start)
    steps = int(np.max(result.bounds["T"]))
    tokens = result.outputs["tokens"]
    first = np.asarray(tokens[0] if isinstance(tokens, list) else tokens[0])
    out = Result(
        config=config.__dict__,
        ms_per_token=1e3 * statistics.median(times[1:]) / steps,
        peak_rss_mib=peak_rss_mib(),
        tokens_crc=crc(first),
        tokens=len(first),
    )
    out.extra["runtime_peak_mib"] = result.peak_bytes / 2**20
    out.notes.append("time per token: median whole-run time / T (steps are not timed one by one)")
    return out
