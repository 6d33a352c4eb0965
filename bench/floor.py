"""The floor of the decode benchmark: the larger of (floating-point
operations per token / this machine's measured matrix-product rate) and
(bytes that must be read per token / measured memory bandwidth). Both
rates are measured in the same run as the implementations."""

from __future__ import annotations

import time

import numpy as np
from common import Config


def _best(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure_rates() -> dict:
    """FLOP/s of a float32 matrix product, and bytes/s of copies by size:
    a decode step reads its weights and keys and values again and again,
    so the bandwidth that bounds it is the one at its working set's size
    (from cache when it fits), not only the DRAM bandwidth."""
    n = 1024
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    b = a.copy()
    a @ b
    flops = 2 * n**3 / _best(lambda: a @ b)
    bandwidth = {}
    for mib in (1, 4, 16, 64, 256):
        src = np.ones(mib << 20, np.uint8)
        dst = np.empty_like(src)
        np.copyto(dst, src)
        bandwidth[mib << 20] = 2 * src.nbytes / _best(lambda d=dst, s=src: np.copyto(d, s))
    return {"flops_per_s": flops, "bytes_per_s_by_size": bandwidth}


def read_bandwidth(gib: int = 1) -> float:
    """Bytes/s read by a float32 matrix-vector product over `gib` GiB
    (numpy's BLAS, on every core): what a decode step at batch 1 does
    with its weights. Reads alone run faster than the copies above,
    which also write."""
    a = np.ones(((gib << 30) // 2048, 512), np.float32)
    v = np.ones(512, np.float32)
    a @ v
    seconds = _best(lambda: a @ v)
    return a.nbytes / seconds


def bandwidth_at(rates: dict, size: float) -> float:
    """The measured copy bandwidth for the smallest size >= `size`."""
    table = sorted(rates["bytes_per_s_by_size"].items())
    for n, rate in table:
        if n >= size:
            return rate
    return table[-1][1]


def per_token(config: Config, rates: dict) -> dict:
    """Floor time per token (ms), averaged over the run's steps."""
    d, f, v, layers = config.d_model, 4 * config.d_model, config.vocab, config.layers
    params = layers * (4 * d * d + 2 * d * f) + v * d  # matrix weights (logits tied)
    steps = np.arange(config.length)
    ctx = steps + 1 if config.attention == "causal" else np.minimum(steps + 1, config.window)
    mean_ctx = float(ctx.mean())
    flops = 2 * params + layers * 4 * mean_ctx * d  # matvecs, then q.k and p.v
    bytes_read = 4 * (params + layers * 2 * mean_ctx * d)  # weights + keys and values
    working = 4 * (params + layers * 2 * float(ctx.max()) * d)
    bandwidth = bandwidth_at(rates, working)
    seconds = max(flops / rates["flops_per_s"], bytes_read / bandwidth)
    return {
        "ms_per_token": 1e3 * seconds,
        "flops": flops,
        "bytes": bytes_read,
        "bandwidth": bandwidth,
    }
