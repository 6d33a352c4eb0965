"""A decoder's log-probs of given tokens at every step at once (teacher
forcing), for a microbatch of rows that step together.

Decoder.__call__ runs one step of the step dim per point: its products
have as many rows as the microbatch (32 in GRPO's default bench), and a
tuned sgemm repacks the whole weight at every call. Where the tokens are
known for every step (the reference model, or the policy for its loss,
scoring finished completions), the same forward can run over all the
steps at once: each product then has steps x rows rows, and attention is
causal over the steps, read with a mask instead of a slice along the step
dim. prefix() does the same for Decoder.prefix, the prompt positions a
group's rows share.

The inputs are read along the whole step dim, (T, rows) per point, T the
symbolic number of steps that ran. Shapes with T keep it leading and never
reshape it (the frontend reshapes static shapes only): heads are split by
reshaping the weights instead, and broadcasts along rows go through einsum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import pdg.frontend as pf
from pdg.frontend import ProgramError, TensorLike

from .attention import PrefixRead
from .decoder import HIDDEN_SCORE, Decoder, Prefix
from .layers import Linear
from .rope import rotary_parts


def unsupported(model: Decoder) -> str | None:
    """Why `model` has no teacher-forced form here (None: it has one)."""
    if model.shards is not None:  # then its projections are not plain Linears
        return "its weights are split over ranks"
    for _, attn, _, _ in model.blocks:
        if attn.pattern.kind != "full":
            return f"a layer attends with a '{attn.pattern.kind}' pattern"
    if any(isinstance(m, Linear) and m.adapter is not None and m.adapter_enabled
           for m in model.modules()):  # fmt: skip
        return "it has LoRA adapters enabled"
    return None


@dataclass(frozen=True)
class ForcedPrefix:
    """Decoder.prefix()'s keys and values, computed over every position of
    the prefix at once (prefix()): per layer (S, M, kv heads, head_dim),
    and the bias (S,), read by a step (or by sequence_log_probs) as a
    Decoder.prefix's are."""

    layers: tuple
    bias: TensorLike
    group: int

    def read(self, layer: int) -> PrefixRead:
        keys, values = self.layers[layer]
        return PrefixRead(keys, values, self.bias, self.group)


def prefix(
    model: Decoder,
    tokens: TensorLike,
    positions: TensorLike,
    visible: TensorLike,
    group: int,
) -> ForcedPrefix:
    """Decoder.prefix() with every position of the prefix in one product:
    `tokens` (S, M), the prompts' first S tokens; `positions` (S,);
    `visible` (S,) i1, the positions the later steps attend to. As
    Decoder.prefix, the last layer computes only its keys and values."""
    _check(model)
    if tokens.ndim != 2 or positions.ndim != 1 or visible.ndim != 1:
        raise ProgramError(
            "prefix takes tokens of (steps, rows), and positions and visible of (steps,)"
        )
    x, at = _embedded(model, tokens, positions)
    causal = _causal(model, at)
    layers = []
    for n, (ln1, attn, ln2, mlp) in enumerate(model.blocks):
        h = ln1(x)
        name = f"{attn.path}.forced_prefix".replace(".", "_")
        if n + 1 == len(model.blocks):
            k, v = _keys_values(attn, h, at)
        else:
            y, k, v = _attention(attn, h, at, causal, None)
            x = x + y
            x = x + mlp(ln2(x))
        layers.append((k.named(f"{name}_k"), v.named(f"{name}_v")))
    bias = (visible.astype(model.config.dtype) - 1.0) * -HIDDEN_SCORE  # 0 or HIDDEN_SCORE
    return ForcedPrefix(tuple(layers), bias, group)


def sequence_log_probs(
    model: Decoder,
    tokens: TensorLike,
    chosen: TensorLike,
    positions: TensorLike,
    prefix: Prefix | ForcedPrefix | None = None,
    temperature: float = 1.0,
) -> TensorLike:
    """(T, rows): at step t, the log-prob (at `temperature`) that `model`
    gives `chosen[t]` after the tokens at steps 0..t (and the prefix).
    `tokens`, `chosen`: (T, rows) i64; `positions`: (T,) i64, shared by the
    rows; `prefix`: keys and values before step 0 that groups of rows share
    (Decoder.prefix or prefix()). Equal, step by step, to the log-softmax
    of Decoder.__call__'s logits at `chosen`."""
    _check(model)
    if tokens.ndim != 2 or chosen.ndim != 2 or positions.ndim != 1:
        raise ProgramError(
            "sequence_log_probs takes tokens and chosen of (steps, rows) and positions of (steps,)"
        )
    x, at = _embedded(model, tokens, positions)
    causal = _causal(model, at)
    for n, (ln1, attn, ln2, mlp) in enumerate(model.blocks):
        shared = prefix.read(n) if prefix is not None else None
        x = x + _attention(attn, ln1(x), at, causal, shared)[0]
        x = x + mlp(ln2(x))
    h = model.ln_f(x)
    if model.head is None:
        logits = pf.einsum("trd,vd->trv", h, model.wte.table)
        picked = pf.einsum("trd,trd->tr", h, pf.take(model.wte.table, chosen, axis=0))
    else:
        logits = h @ model.head
        picked = pf.einsum("trd,dtr->tr", h, pf.take(model.head, chosen, axis=1))
    if temperature != 1.0:
        logits, picked = logits * (1.0 / temperature), picked * (1.0 / temperature)
    # The max only keeps exp() in range: it cancels, so no gradient.
    top = pf.stop_gradient(logits.max(axis=-1, keepdims=True))
    spread = pf.exp(logits - top).sum(axis=-1)
    return picked - (top.sum(axis=-1) + pf.log(spread))


def _check(model: Decoder) -> None:
    if (why := unsupported(model)) is not None:
        raise ProgramError(f"no teacher-forced form of '{model.path or 'the model'}': {why}")


def _embedded(model: Decoder, tokens: TensorLike, positions: TensorLike):
    """(x (T, rows, d), the positions as reals (T,)): the tokens' embeddings
    plus, with learned positions, each step's position row."""
    rows = tokens.shape[1]
    real = model.config.dtype
    x = model.wte(tokens)
    if model.wpe is not None:
        # Each step's position row, spread over the rows (T, d) -> (T, rows, d).
        ones_rows = model.program.constant_array(np.ones(rows, dtype=pf.dtypes.numpy_dtype(real)))
        x = x + pf.einsum("td,r->trd", model.wpe(positions), ones_rows)
    return x, positions.astype(real)


def _causal(model: Decoder, at: TensorLike) -> TensorLike:
    """(T, T): 0 where key step s <= query step t, HIDDEN_SCORE after."""
    ones_steps = at * 0.0 + 1.0
    later = pf.einsum("t,s->ts", ones_steps, at) - pf.einsum("t,s->ts", at, ones_steps)
    return (later > 0.0).astype(model.config.dtype) * HIDDEN_SCORE


def _project(linear: Linear, x: TensorLike, spec: str, *split: int) -> TensorLike:
    """x @ w + b with w's output dim split into `split` (heads first)."""
    w = linear.w.reshape(linear.w.shape[0], *split)
    y = pf.einsum(spec, x, w)
    return y + linear.b.reshape(*split) if linear.b is not None else y


def _rotate(attn, x: TensorLike, at: TensorLike, spec: str) -> TensorLike:
    """Rotary embedding of x (T, rows, ..., head_dim) at each step's position:
    nn.rope.rotary's, its angles (T, head_dim) spread over x by einsum."""
    inv, rotated = rotary_parts(x, frequencies=attn.frequencies)
    angle = pf.einsum("t,e->te", at, inv)
    return pf.einsum(spec, x, pf.cos(angle)) + pf.einsum(spec, rotated, pf.sin(angle))


def _keys_values(attn, x: TensorLike, at) -> tuple[TensorLike, TensorLike]:
    """The keys and values (T, rows, kv heads, head_dim) of every step, as
    Attention.keys_values gives a step's."""
    kvh, hd = attn.kvh, attn.hd
    k = _project(attn.k, x, "trd,dke->trke", kvh, hd)
    v = _project(attn.v, x, "trd,dke->trke", kvh, hd)
    if attn.k_norm is not None:
        k = attn.k_norm(k)
    if attn.rope:
        k = _rotate(attn, k, at, "trke,te->trke")
    return k, v


def _attention(attn, x: TensorLike, at, causal, prefix):
    """Causal attention of every step over the steps up to it (and the
    shared prefix): (T, rows, d) -> (T, rows, d), with the steps' keys and
    values."""
    kvh, hd = attn.kvh, attn.hd
    g = attn.h // kvh
    q = _project(attn.q, x, "trd,dkge->trkge", kvh, g, hd)
    k, v = _keys_values(attn, x, at)
    if attn.q_norm is not None:
        q = attn.q_norm(q)
    if attn.rope:
        q = _rotate(attn, q, at, "trkge,te->trkge")
    scale = 1.0 / math.sqrt(hd)
    own = pf.einsum("trkge,srke->rkgts", q, k) * scale + causal
    if prefix is None:
        out = pf.einsum("rkgts,srke->trkge", pf.softmax(own, axis=-1), v)
    else:
        if x.shape[1] % prefix.group:
            raise ProgramError("a shared prefix is read by rows in whole groups")
        # Row r reads prefix row r // group: the prefix's keys gathered per row.
        spread = np.arange(x.shape[1]) // prefix.group
        row_of = attn.program.constant_array(spread.astype(np.int64), "i64")
        pk = pf.take(prefix.keys, row_of, axis=1)
        pv = pf.take(prefix.values, row_of, axis=1)
        shared = pf.einsum("trkge,srke->rkgts", q, pk) * scale + prefix.bias
        top = pf.maximum(shared.max(axis=-1, keepdims=True), own.max(axis=-1, keepdims=True))
        top = pf.stop_gradient(top)
        e_shared, e_own = pf.exp(shared - top), pf.exp(own - top)
        total = e_shared.sum(axis=-1, keepdims=True) + e_own.sum(axis=-1, keepdims=True)
        out = pf.einsum("rkgts,srke->rkgte", e_shared, pv)
        out = out + pf.einsum("rkgts,srke->rkgte", e_own, v)
        out = pf.einsum("rkgte,rkgt->trkge", out, 1.0 / total.sum(axis=-1))
    wo = attn.o.w.reshape(kvh, g, hd, attn.o.w.shape[1])
    y = pf.einsum("trkge,kged->trd", out, wo)
    return (y + attn.o.b if attn.o.b is not None else y), k, v
