"""PyTorch eager with a KV cache, as a user would write it: preallocated
keys and values for causal attention, a ring buffer of the window's size
for window attention; greedy, float32, one token per step."""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
from common import PROMPT, Config, Result, crc, peak_rss_mib, weights


def run(config: Config) -> Result:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    w = {k: torch.from_numpy(v) for k, v in weights(config).items()}
    d, h = config.d_model, config.heads
    hd = d // h
    causal = config.attention == "causal"
    slots = config.length if causal else config.window
    cache = torch.zeros(config.layers, 2, slots, h, hd)
    tokens = list(PROMPT)
    times = []
    with torch.inference_mode():
        for t in range(config.length):
            start = time.perf_counter()
            x = w["wte.w"][tokens[t]] + w["wpe.w"][t]
            n = min(t + 1, slots)
            at = t if causal else t % slots
            for i in range(config.layers):
                p = f"h{i}."
                a = F.layer_norm(x, (d,), w[p + "ln1.g"], w[p + "ln1.b"], eps=1e-5)
                q = (a @ w[p + "attn.q.w"] + w[p + "attn.q.b"]).view(h, hd)
                cache[i, 0, at] = (a @ w[p + "attn.k.w"] + w[p + "attn.k.b"]).view(h, hd)
                cache[i, 1, at] = (a @ w[p + "attn.v.w"] + w[p + "attn.v.b"]).view(h, hd)
                k, v = cache[i, 0, :n], cache[i, 1, :n]
                scores = torch.einsum("hd,shd->hs", q, k) / math.sqrt(hd)
                att = torch.einsum("hs,shd->hd", scores.softmax(-1), v).reshape(d)
                x = x + att @ w[p + "attn.o.w"] + w[p + "attn.o.b"]
                m = F.layer_norm(x, (d,), w[p + "ln2.g"], w[p + "ln2.b"], eps=1e-5)
                m = F.gelu(m @ w[p + "mlp.fc.w"] + w[p + "mlp.fc.b"], approximate="tanh")
                x = x + m @ w[p + "mlp.proj.w"] + w[p + "mlp.proj.b"]
            x = F.layer_norm(x, (d,), w["ln_f.g"], w["ln_f.b"], eps=1e-5)
            choice = int(torch.argmax(x @ w["wte.w"].T))
            times.append(time.perf_counter() - start)
            if t + 1 >= len(tokens):
                tokens.append(choice)
    generated = tokens[len(PROMPT) :]  # the choice made at each step
    predictions = np.array(PROMPT[1:] + generated, np.int64)[: config.length]
    return Result(
        config=config.__dict__,
        ms_per_token=1e3 * statistics.median(times),
        peak_rss_mib=peak_rss_mib(),
        tokens_crc=crc(predictions),
        tokens=len(predictions),
    )
