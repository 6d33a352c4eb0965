"""What every implementation in the decode benchmark shares: the
configuration, the seeded weights (GPT-2 layout, by pdg's parameter paths)
and the result record."""

from __future__ import annotations

import json
import resource
import time
import zlib
from dataclasses import asdict, dataclass, field

import numpy as np


@dataclass(frozen=True)
class Config:
    impl: str
    attention: str  # causal | window
    length: int  # tokens decoded (T), prompt included
    window: int = 64
    d_model: int = 256
    layers: int = 2
    heads: int = 4
    vocab: int = 1024
    batch: int = 1
    max_length: int = 4096  # the one bound every length runs under

    @property
    def pattern(self) -> str:
        """pdg's attention pattern name."""
        return "full" if self.attention == "causal" else f"window:{self.window}"

    def key(self) -> str:
        return f"{self.impl}/{self.attention}/{self.length}"


@dataclass
class Result:
    config: dict
    ms_per_token: float | None = None  # median over steps (or over runs / T)
    compile_s: float | None = None
    peak_rss_mib: float | None = None
    tokens_crc: str | None = None
    tokens: int | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def weights(config: Config, seed: int = 0, scale: float = 1.0) -> dict[str, np.ndarray]:
    """Seeded float32 weights by parameter path (pdg.nn.GPT's paths),
    normal * scale; norms' gains 1, biases 0. With scale 1 greedy choices
    are clear-cut: PyTorch and JAX agree on all 4096 tokens (at 0.5 a
    near-tie flips them apart after 158 steps in float32)."""
    rng = np.random.default_rng(seed)
    d, f, v = config.d_model, 4 * config.d_model, config.vocab
    shapes = {"wte.w": (v, d), "wpe.w": (config.max_length, d), "ln_f.g": (d,), "ln_f.b": (d,)}
    for i in range(config.layers):
        p = f"h{i}."
        shapes |= {
            p + "ln1.g": (d,),
            p + "ln1.b": (d,),
            p + "ln2.g": (d,),
            p + "ln2.b": (d,),
            p + "attn.q.w": (d, d),
            p + "attn.q.b": (d,),
            p + "attn.k.w": (d, d),
            p + "attn.k.b": (d,),
            p + "attn.v.w": (d, d),
            p + "attn.v.b": (d,),
            p + "attn.o.w": (d, d),
            p + "attn.o.b": (d,),
            p + "mlp.fc.w": (d, f),
            p + "mlp.fc.b": (f,),
            p + "mlp.proj.w": (f, d),
            p + "mlp.proj.b": (d,),
        }
    out = {}
    for path, shape in sorted(shapes.items()):
        leaf = path.rsplit(".", 1)[-1]
        if leaf == "g":
            out[path] = np.ones(shape, np.float32)
        elif leaf == "b":
            out[path] = np.zeros(shape, np.float32)
        else:
            out[path] = (rng.standard_normal(shape) * scale).astype(np.float32)
    return out


PROMPT = [1]  # one token, as the issue specifies


def crc(tokens) -> str:
    return f"{zlib.crc32(np.asarray(tokens, np.int64).tobytes()):08x}"


def peak_rss_mib() -> float:
    """This process's peak resident memory. VmHWM belongs to the address
    space, which exec creates anew; getrusage's ru_maxrss would carry the
    parent's peak over fork and exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def best(run, repeats: int) -> float:
    """The fastest of `repeats` calls of `run()` in seconds, after one
    untimed call (pages touched, caches and the thread pool warm)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)
