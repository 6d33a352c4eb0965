"""A small PyTorch reward model for the tests: the contract of
build_grpo(reward_model=...), forward(ids (B, L) int64, lengths (B,)) ->
(B,) scores."""

from __future__ import annotations

import torch
from torch import nn


class TinyRewardModel(nn.Module):
    """Token and position embeddings, one pre-norm transformer encoder
    layer (padding keys masked by the lengths), mean pooling over each
    completion's tokens, a linear head."""

    def __init__(self, vocab: int, d: int = 16, heads: int = 2, max_len: int = 64):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(
            nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d)
        )
        self.head = nn.Linear(d, 1)

    def forward(self, ids, lengths):
        b, n = ids.shape
        d = self.tok.embedding_dim
        valid = torch.arange(n)[None, :] < lengths[:, None]  # (b, n)
        x = self.tok(ids) + self.pos(torch.arange(n))[None]
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (a.reshape(b, n, self.heads, d // self.heads).transpose(1, 2) for a in (q, k, v))
        scores = q @ k.transpose(2, 3) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        att = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(att.transpose(1, 2).reshape(b, n, d))
        x = x + self.mlp(self.ln2(x))
        w = valid.to(x.dtype)[:, :, None]
        pooled = (x * w).sum(1) / w.sum(1)
        return self.head(pooled)[:, 0]


def torch_scores(model: nn.Module, completions) -> list[float]:
    """The model on each completion alone (B = 1, L = its length)."""
    out = []
    with torch.no_grad():
        for c in completions:
            ids = torch.tensor(list(map(int, c)), dtype=torch.int64)[None]
            out.append(float(model(ids, torch.tensor([ids.shape[1]]))[0]))
    return out
