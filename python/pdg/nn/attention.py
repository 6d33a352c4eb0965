"""Multi-head and grouped-query causal attention over the step dim.

At step t the query attends to the keys and values of earlier steps, read
through a slice of t whose shape is the attention pattern:

    full    k[..., 0 : t + 1]
    window  k[..., max(0, t - w + 1) : t + 1]      (the last w steps)
    block   k[..., (t // s) * s : t + 1]           (steps of t's block)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pdg.frontend as pf
from pdg.frontend import Dim, ProgramError, RecurrentTensor, TensorLike

from .layers import Linear, Module, rotary


@dataclass(frozen=True)
class AttentionPattern:
    kind: str = "full"  # full | window | block
    size: int = 0  # window length or block size

    def __post_init__(self):
        if self.kind not in ("full", "window", "block"):
            raise ProgramError(
                f"unknown attention pattern '{self.kind}'", hint="use 'full', 'window' or 'block'"
            )
        if self.kind != "full" and self.size < 1:
            raise ProgramError(f"a {self.kind} attention pattern needs a positive size")

    def keys(self, value: RecurrentTensor, step: Dim) -> pf.View:
        """The slice of `value` along `step` that step t attends to."""
        if self.kind == "full":
            lo = 0
        elif self.kind == "window":
            lo = pf.max(0, step - (self.size - 1))
        else:
            lo = (step // self.size) * self.size
        return value[lo : step + 1]

    @staticmethod
    def parse(text: str) -> AttentionPattern:
        """'full', 'window:64', 'block:16'."""
        kind, _, size = text.partition(":")
        return AttentionPattern(kind, int(size) if size else 0)


class Attention(Module):
    """Causal self-attention with n_heads query heads sharing n_kv_heads key
    and value heads (n_kv_heads == n_heads: multi-head; fewer: grouped)."""

    def __init__(
        self,
        program,
        path,
        d: int,
        n_heads: int,
        n_kv_heads: int | None = None,
        pattern: AttentionPattern = AttentionPattern(),
        rope: bool = False,
        dtype="f32",
    ):
        super().__init__(program, path)
        n_kv_heads = n_kv_heads or n_heads
        if d % n_heads or n_heads % n_kv_heads:
            raise ProgramError(
                f"d={d} must divide into {n_heads} heads, and those into {n_kv_heads} kv heads"
            )
        self.d, self.h, self.kvh = d, n_heads, n_kv_heads
        self.hd = d // n_heads
        self.pattern, self.rope = pattern, rope
        self.q = self.child(Linear(program, f"{path}.q", d, d, dtype=dtype))
        self.k = self.child(Linear(program, f"{path}.k", d, self.kvh * self.hd, dtype=dtype))
        self.v = self.child(Linear(program, f"{path}.v", d, self.kvh * self.hd, dtype=dtype))
        self.o = self.child(Linear(program, f"{path}.o", d, d, dtype=dtype))

    def __call__(self, x: TensorLike, step: Dim, position: TensorLike | None = None):
        """x: (d,) at each point of a domain containing `step`, or (rows, d)
        for a microbatch of rows that step together (every row attends to
        its own earlier steps)."""
        if x.ndim not in (1, 2):
            raise ProgramError(f"attention takes (d,) or (rows, d) points, got {x.shape}")
        rows = tuple(x.shape[:-1])  # () or (R,)
        r = "r" if rows else ""
        q = self.q(x).reshape(*rows, self.h, self.hd)
        k = self.k(x).reshape(*rows, self.kvh, self.hd)
        v = self.v(x).reshape(*rows, self.kvh, self.hd)
        if self.rope:
            if position is None:
                raise ProgramError("rotary attention needs the position of each step")
            q, k = rotary(q, position), rotary(k, position)
        keys = self.pattern.keys(k.named(f"{self.path}.k_cache".replace(".", "_")), step)
        values = self.pattern.keys(v.named(f"{self.path}.v_cache".replace(".", "_")), step)
        g = self.h // self.kvh
        qg = q.reshape(*rows, self.kvh, g, self.hd)
        scores = pf.einsum(f"{r}kgd,s{r}kd->{r}kgs", qg, keys) * (1.0 / math.sqrt(self.hd))
        probs = pf.softmax(scores, axis=-1)
        out = pf.einsum(f"{r}kgs,s{r}kd->{r}kgd", probs, values)
        return self.o(out.reshape(*rows, self.d))
