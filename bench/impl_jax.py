"""JAX in the decode benchmark, three ways:

static-step  KV buffers preallocated to the maximum length, attention
             masked (the window by the mask too); one jitted step per token.
static-loop  the same step inside lax.fori_loop: the whole decode is one
             jitted call (JAX's fastest form).
dynamic      keys and values grow by one each step (for a window, the last
             w are kept): every new shape is a fresh XLA compile. Causal
             attention is capped (see CAP) rather than spend the benchmark's
             time compiling.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
from common import PROMPT, Config, Result, crc, peak_rss_mib, weights

CAP = 128  # causal steps the dynamic variant runs (each step recompiles)


def _model(jnp, jax, config: Config):
    d, h = config.d_model, config.heads
    hd = d // h

    def ln(x, g, b):
        mu = x.mean()
        var = ((x - mu) ** 2).mean()
        return (x - mu) / jnp.sqrt(var + 1e-5) * g + b

    def block(w, i, x, keys, values, mask):
        """One layer at one step; keys/values [n, h, hd] include this step."""
        p = f"h{i}."
        a = ln(x, w[p + "ln1.g"], w[p + "ln1.b"])
        q = (a @ w[p + "attn.q.w"] + w[p + "attn.q.b"]).reshape(h, hd)
        scores = jnp.einsum("hd,shd->hs", q, keys) / math.sqrt(hd)
        if mask is not None:
            scores = jnp.where(mask[None, :], scores, -jnp.inf)
        att = jnp.einsum("hs,shd->hd", jax.nn.softmax(scores, axis=-1), values).reshape(d)
        x = x + att @ w[p + "attn.o.w"] + w[p + "attn.o.b"]
        m = ln(x, w[p + "ln2.g"], w[p + "ln2.b"])
        m = jax.nn.gelu(m @ w[p + "mlp.fc.w"] + w[p + "mlp.fc.b"], approximate=True)
        return x + m @ w[p + "mlp.proj.w"] + w[p + "mlp.proj.b"]

    def kv(w, i, a_in):
        p = f"h{i}."
        a = ln(a_in, w[p + "ln1.g"], w[p + "ln1.b"])
        k = (a @ w[p + "attn.k.w"] + w[p + "attn.k.b"]).reshape(h, hd)
        v = (a @ w[p + "attn.v.w"] + w[p + "attn.v.b"]).reshape(h, hd)
        return k, v

    def head(w, x):
        x = ln(x, w["ln_f.g"], w["ln_f.b"])
        return jnp.argmax(x @ w["wte.w"].T)

    return block, kv, head


def _static_step(jnp, jax, config: Config):
    """step(w, cache, token, t) -> (cache, choice); cache [L, 2, T, h, hd]
    preallocated to the full length, the window applied by the mask."""
    block, kv, head = _model(jnp, jax, config)
    slots = config.length

    def step(w, cache, token, t):
        x = w["wte.w"][token] + w["wpe.w"][t]
        s = jnp.arange(slots)
        mask = s <= t
        if config.attention == "window":
            mask = mask & (s > t - config.window)
        for i in range(config.layers):
            k, v = kv(w, i, x)
            cache = cache.at[i, 0, t].set(k).at[i, 1, t].set(v)
            x = block(w, i, x, cache[i, 0], cache[i, 1], mask)
        return cache, head(w, x)

    shape = (config.layers, 2, slots, config.heads, config.d_model // config.heads)
    return step, shape


def run(config: Config, variant: str) -> Result:
    import jax
    import jax.numpy as jnp

    w = {k: jnp.asarray(v) for k, v in weights(config).items()}
    if variant == "dynamic":
        return _dynamic(jnp, jax, config, w)
    step, shape = _static_step(jnp, jax, config)
    cache = jnp.zeros(shape, jnp.float32)
    token = jnp.asarray(PROMPT[0])
    if variant == "static-step":
        start = time.perf_counter()
        compiled = jax.jit(step, donate_argnums=(1,)).lower(w, cache, token, 0).compile()
        compile_s = time.perf_counter() - start
        choices, times = [], []
        for t in range(config.length):
            start = time.perf_counter()
            cache, token = compiled(w, cache, token, t)
            token.block_until_ready()
            times.append(time.perf_counter() - start)
            choices.append(int(token))
        ms = 1e3 * statistics.median(times[1:] or times)
    else:  # static-loop

        def decode(w, cache, token):
            out = jnp.zeros(config.length, jnp.int32)

            def body(t, carry):
                cache, token, out = carry
                cache, token = step(w, cache, token, t)
                return cache, token, out.at[t].set(token)

            return jax.lax.fori_loop(0, config.length, body, (cache, token, out))[2]

        jitted = jax.jit(decode)
        start = time.perf_counter()
        compiled = jitted.lower(w, cache, token).compile()
        compile_s = time.perf_counter() - start
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            out = compiled(w, cache, token)
            out.block_until_ready()
            runs.append(time.perf_counter() - start)
        choices = [int(x) for x in np.asarray(out)]
        ms = 1e3 * statistics.median(runs) / config.length
    result = Result(
        config=config.__dict__,
        ms_per_token=ms,
        compile_s=compile_s,
        peak_rss_mib=peak_rss_mib(),
        tokens_crc=crc(choices),
        tokens=len(choices),
    )
    if variant == "static-loop":
        result.notes.append("time per token: median whole-loop time / T")
    return result


def _dynamic(jnp, jax, config: Config, w) -> Result:
    block, kv, head = _model(jnp, jax, config)
    causal = config.attention == "causal"
    length = min(config.length, CAP) if causal else config.length

    def step(w, keys, values, token, t):
        """keys/values: [L, n, h, hd] for the steps kept before this one."""
        x = w["wte.w"][token] + w["wpe.w"][t]
        new_k, new_v = [], []
        for i in range(config.layers):
            k, v = kv(w, i, x)
            ks = jnp.concatenate([keys[i], k[None]], axis=0)
            vs = jnp.concatenate([values[i], v[None]], axis=0)
            if not causal:
                ks, vs = ks[-config.window :], vs[-config.window :]
            new_k.append(ks)
            new_v.append(vs)
            x = block(w, i, x, ks, vs, None)
        return jnp.stack(new_k), jnp.stack(new_v), head(w, x)

    jitted = jax.jit(step)
    executables = {}
    hd = config.d_model // config.heads
    keys = jnp.zeros((config.layers, 0, config.heads, hd), jnp.float32)
    values = keys
    token = jnp.asarray(PROMPT[0])
    choices, times, compile_s, compiles = [], [], 0.0, 0
    for t in range(length):
        shape = keys.shape
        if shape not in executables:  # a new shape: compile first, timed apart
            start = time.perf_counter()
            executables[shape] = jitted.lower(w, keys, values, token, t).compile()
            compile_s += time.perf_counter() - start
            compiles += 1
        start = time.perf_counter()
        keys, values, token = executables[shape](w, keys, values, token, t)
        token.block_until_ready()
        times.append(time.perf_counter() - start)
        choices.append(int(token))
    result = Result(
        config=config.__dict__,
        ms_per_token=1e3 * statistics.median(times),
        compile_s=compile_s,
        peak_rss_mib=peak_rss_mib(),
        tokens_crc=crc(choices),
        tokens=len(choices),
    )
    result.extra["compiles"] = compiles
    if length < config.length:
        result.notes.append(f"capped at {length} steps (each step recompiles)")
    return result
