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


@dataclass(frozen=True)
class PrefixRead:
    """What a step reads of a shared prefix (nn.Decoder.prefix): one
    layer's keys and values along the whole prefix dim, (S, M, kv heads,
    head_dim) for M prefix rows each shared by `group` consecutive rows of
    the step, and `bias` (S,): 0 at a position the rows attend to, a large
    negative number at one they do not."""

    keys: TensorLike
    values: TensorLike
    bias: TensorLike
    group: int


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

    def keys_values(self, x: TensorLike, position: TensorLike | None):
        """The step's keys and values (rows, kv heads, head_dim), as the
        cache holds them: what a shared prefix computes once per prompt."""
        if x.ndim not in (1, 2):
            raise ProgramError(f"attention takes (d,) or (rows, d) points, got {x.shape}")
        rows = tuple(x.shape[:-1])
        k = self.k(x).reshape(*rows, self.kvh, self.hd)
        v = self.v(x).reshape(*rows, self.kvh, self.hd)
        if self.k_norm is not None:
            k = self.k_norm(k)
        if self.rope:
            k = rotary(k, self._position(position), frequencies=self.frequencies)
        return k, v

    def _position(self, position):
        if position is None:
            raise ProgramError("rotary attention needs the position of each step")
        return position

    def __call__(
        self,
        x: TensorLike,
        step: Dim,
        position: TensorLike | None = None,
        prefix: PrefixRead | None = None,
        cache: tuple[TensorLike, TensorLike] | None = None,
    ):
        """x: (d,) at each point of a domain containing `step`, or (rows, d)
        for a microbatch of rows that step together (every row attends to
        its own earlier steps). `prefix`: keys and values before the first
        step that groups of rows share (see PrefixRead). `cache`: this
        step's keys and values, already computed by keys_values() and named
        by the caller (a shared prefix's)."""
        rows = tuple(x.shape[:-1])  # () or (R,)
        r = "r" if rows else ""
        q = self.q(x).reshape(*rows, self.h, self.hd)
        if cache is None:
            k, v = self.keys_values(x, position)
            k = k.named(f"{self.path}.k_cache".replace(".", "_"))
            v = v.named(f"{self.path}.v_cache".replace(".", "_"))
        else:
            k, v = cache
        if self.q_norm is not None:
            q = self.q_norm(q)
        if self.rope:
            q = rotary(q, self._position(position), frequencies=self.frequencies)
        keys = self.pattern.keys(k, step)
        values = self.pattern.keys(v, step)
        g = self.h // self.kvh
        qg = q.reshape(*rows, self.kvh, g, self.hd)
        scale = 1.0 / math.sqrt(self.hd)
        scores = pf.einsum(f"{r}kgd,s{r}kd->{r}kgs", qg, keys) * scale
        if prefix is not None:
            out = self._with_prefix(qg, scores, values, prefix, scale)
        else:
            probs = pf.softmax(scores, axis=-1)
            out = pf.einsum(f"{r}kgs,s{r}kd->{r}kgd", probs, values)
        return self.o(out.reshape(*rows, self.h * self.hd))

    def _with_prefix(self, qg, scores, values, prefix: PrefixRead, scale: float):
        """One softmax over the shared prefix's keys and the rows' own:
        row r of the (M * G) rows reads prefix row r // G, as an (M, G)
        product against the (M)-row prefix, never copied per row."""
        if self.pattern.kind != "full":
            raise ProgramError(
                f"a shared prefix needs full attention, not '{self.pattern.kind}'",
                hint="build without the shared prefill (share_prefill=False)",
            )
        if qg.ndim != 4 or qg.shape[0] % prefix.group:
            raise ProgramError("a shared prefix is read by (rows, d) points of whole groups")
        rows, g = qg.shape[0], self.h // self.kvh
        m, n = rows // prefix.group, prefix.group
        q5 = qg.reshape(m, n, self.kvh, g, self.hd)
        shared = pf.einsum("mnkgd,smkd->mnkgs", q5, prefix.keys) * scale + prefix.bias
        # The max is only for stability: it cancels, so no gradient.
        top = pf.maximum(shared.max(axis=-1).reshape(rows, self.kvh, g), scores.max(axis=-1))
        top = pf.stop_gradient(top)
        e_shared = pf.exp(shared - top.reshape(m, n, self.kvh, g, 1))
        e_own = pf.exp(scores - top.reshape(rows, self.kvh, g, 1))
        total = e_shared.sum(axis=-1).reshape(rows, self.kvh, g) + e_own.sum(axis=-1)
        out = pf.einsum("mnkgs,smkd->mnkgd", e_shared, prefix.values)
        out = out.reshape(rows, self.kvh, g, self.hd)
        out = out + pf.einsum("rkgs,srkd->rkgd", e_own, values)
        return out / total.reshape(rows, self.kvh, g, 1)
