"""An independent PyTorch implementation of the reference decode program:
a GPT-2-style model (pre-norm, tanh GELU, tied logits) with full, window
or block causal attention, batched greedy or sampled decoding with prompts
of different lengths and EOS per sequence. float64 throughout.

Written directly with torch ops from the model's definition, not from
pdg's frontend, so that the two can be compared."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

MASK64 = (1 << 64) - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def gumbel_noise(seed: int, b: int, t: int, vocab: int) -> np.ndarray:
    """Noise for position (b, t): hash(seed, b, t, i) -> u -> -log(-log(u))."""
    h = seed & MASK64
    for c in (b, t):
        h = splitmix64(h ^ c)
    out = np.empty(vocab)
    for i in range(vocab):
        z = splitmix64(h ^ i)
        u = ((z >> 11) + 0.5) * 2.0**-53
        out[i] = -math.log(-math.log(u))
    return out


def allowed(pattern: str, size: int, t: int, s: int) -> bool:
    if s > t:
        return False
    if pattern == "window":
        return s > t - size
    if pattern == "block":
        return s >= (t // size) * size
    return True


class TorchGPT:
    def __init__(self, w: dict, n_layers: int, n_heads: int, n_kv_heads: int | None = None):
        self.w = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in w.items()}
        self.n_layers, self.h = n_layers, n_heads
        self.kvh = n_kv_heads or n_heads

    def logits(self, tokens: list[int], pattern: str, size: int) -> torch.Tensor:
        """Logits at every position of one sequence (teacher forcing)."""
        return self.hidden(tokens, pattern, size) @ self.w["wte.w"].T

    def hidden(self, tokens: list[int], pattern: str, size: int) -> torch.Tensor:
        """The final normalized hidden state at every position."""
        w = self.w
        n = len(tokens)
        ids = torch.tensor(tokens)
        x = w["wte.w"][ids] + w["wpe.w"][torch.arange(n)]
        d = x.shape[-1]
        hd = d // self.h
        g = self.h // self.kvh
        mask = torch.tensor([[allowed(pattern, size, t, s) for s in range(n)] for t in range(n)])
        for i in range(self.n_layers):
            p = f"h{i}."
            h = F.layer_norm(x, (d,), w[p + "ln1.g"], w[p + "ln1.b"], eps=1e-5)
            q = (h @ w[p + "attn.q.w"] + w[p + "attn.q.b"]).view(n, self.h, hd)
            k = (h @ w[p + "attn.k.w"] + w[p + "attn.k.b"]).view(n, self.kvh, hd)
            v = (h @ w[p + "attn.v.w"] + w[p + "attn.v.b"]).view(n, self.kvh, hd)
            k = k.repeat_interleave(g, dim=1)
            v = v.repeat_interleave(g, dim=1)
            scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
            scores = scores.masked_fill(~mask, float("-inf"))
            att = torch.einsum("hts,shd->thd", scores.softmax(-1), v).reshape(n, d)
            x = x + att @ w[p + "attn.o.w"] + w[p + "attn.o.b"]
            h2 = F.layer_norm(x, (d,), w[p + "ln2.g"], w[p + "ln2.b"], eps=1e-5)
            m = F.gelu(h2 @ w[p + "mlp.fc.w"] + w[p + "mlp.fc.b"], approximate="tanh")
            x = x + m @ w[p + "mlp.proj.w"] + w[p + "mlp.proj.b"]
        return F.layer_norm(x, (d,), w["ln_f.g"], w["ln_f.b"], eps=1e-5)

    def decode(
        self,
        prompt: list[int],
        batch_index: int,
        *,
        eos: int,
        max_len: int,
        pattern: str = "full",
        size: int = 0,
        seed: int | None = None,
        temperature: float = 1.0,
    ):
        """(predictions at each position, their logits) until EOS/max_len."""
        seq = list(prompt)
        preds, all_logits = [], []
        for t in range(max_len):
            logits = self.logits(seq[: t + 1], pattern, size)[t]
            if seed is None:
                choice = int(torch.argmax(logits))
            else:
                noise = gumbel_noise(seed, batch_index, t, logits.shape[0])
                choice = int(np.argmax(logits.numpy() / temperature + noise))
            preds.append(choice)
            all_logits.append(logits.numpy())
            if t + 1 >= len(prompt):
                if t + 1 >= len(seq):
                    seq.append(choice)
                if choice == eos:
                    break
        return np.array(preds), np.stack(all_logits)
