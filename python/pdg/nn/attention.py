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

import numpy as np

import pdg.frontend as pf
from pdg.frontend import Dim, ProgramError, RecurrentTensor, TensorLike

from .layers import Module, RMSNorm
from .rope import rope_frequencies, rotary
from .tensor_parallel import Shards, linear


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
        try:
            return AttentionPattern(kind, int(size) if size else 0)
        except ValueError:
            raise ProgramError(
                f"attention pattern '{text}': '{size}' is not a whole number",
                hint="use 'full', 'window:W' or 'block:S', e.g. 'window:64'",
            ) from None


class Attention(Module):
    """Causal self-attention with n_heads query heads sharing n_kv_heads key
    and value heads (n_kv_heads == n_heads: multi-head; fewer: grouped;
    query head h reads kv head h // (n_heads // n_kv_heads)).

    Options of the model families: `head_dim` (default d // n_heads; Qwen3's
    differs), biases on the q/k/v and the output projections (GPT-2: all;
    Qwen2: q/k/v only; Llama: none), `qk_norm` (Qwen3: an RMSNorm over each
    head of q and k before the rotation), and `rope`: True for rotary
    embeddings of base 10000, or their frequencies (nn.rope_frequencies).

    With `shards`, each rank holds n_heads / ranks query heads and
    n_kv_heads / ranks key/value heads (tensor_parallel.py), so a query
    head's kv head is on the same rank."""

    def __init__(
        self,
        program,
        path,
        d: int,
        n_heads: int,
        n_kv_heads: int | None = None,
        pattern: AttentionPattern = AttentionPattern(),
        rope: bool | np.ndarray = False,
        dtype="f32",
        head_dim: int | None = None,
        qkv_bias: bool = True,
        o_bias: bool = True,
        qk_norm: bool = False,
        norm_eps: float = 1e-6,
        weight_dtype: str | None = None,  # bf16: q/k/v/o weights in bf16 (see Linear)
        shards: Shards | None = None,
    ):
        super().__init__(program, path)
        n_kv_heads = n_kv_heads or n_heads
        if n_heads % n_kv_heads or (head_dim is None and d % n_heads):
            raise ProgramError(
                f"d={d} must divide into {n_heads} heads, and those into {n_kv_heads} kv heads"
            )
        self.d, self.h, self.kvh = d, n_heads, n_kv_heads
        self.hd = head_dim or d // n_heads
        self.pattern = pattern
        self.frequencies = None
        if rope is not False and rope is not None:
            self.frequencies = rope_frequencies(self.hd) if rope is True else np.asarray(rope)
        inner, kv = self.h * self.hd, self.kvh * self.hd
        if shards is not None:  # this rank's heads
            self.h = shards.local(self.h, "query heads")
            self.kvh = shards.local(self.kvh, "key/value heads")

        def project(name, d_in, d_out, bias, split):
            part = f"{path}.{name}"
            return self.child(
                linear(program, part, d_in, d_out, bias, dtype, weight_dtype, shards, split)
            )

        self.q = project("q", d, inner, qkv_bias, "columns")
        self.k = project("k", d, kv, qkv_bias, "columns")
        self.v = project("v", d, kv, qkv_bias, "columns")
        self.o = project("o", inner, d, o_bias, "rows")
        self.q_norm = self.k_norm = None
        if qk_norm:
            self.q_norm = self.child(RMSNorm(program, f"{path}.q_norm", self.hd, norm_eps, dtype))
            self.k_norm = self.child(RMSNorm(program, f"{path}.k_norm", self.hd, norm_eps, dtype))

    @property
    def rope(self) -> bool:
        return self.frequencies is not None

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
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rope:
            if position is None:
                raise ProgramError("rotary attention needs the position of each step")
            q = rotary(q, position, frequencies=self.frequencies)
            k = rotary(k, position, frequencies=self.frequencies)
        keys = self.pattern.keys(k.named(f"{self.path}.k_cache".replace(".", "_")), step)
        values = self.pattern.keys(v.named(f"{self.path}.v_cache".replace(".", "_")), step)
        g = self.h // self.kvh
        qg = q.reshape(*rows, self.kvh, g, self.hd)
        scores = pf.einsum(f"{r}kgd,s{r}kd->{r}kgs", qg, keys) * (1.0 / math.sqrt(self.hd))
        probs = pf.softmax(scores, axis=-1)
        out = pf.einsum(f"{r}kgs,s{r}kd->{r}kgd", probs, values)
        return self.o(out.reshape(*rows, self.h * self.hd))
