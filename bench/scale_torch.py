"""PyTorch baselines of the scale benchmark (bench/scale.py), from the
weights of scale_models.weights:

- `torch`: eager, with a KV cache, as a user would write it: preallocated
  keys and values (causal) or a ring buffer of the window's size
  (window), float32, greedy, the batch's sequences as one matrix per step;
- `hf`: Hugging Face transformers' `generate` (greedy, no EOS) on a
  GPT2LMHeadModel or Qwen2ForCausalLM built from a config (no download)
  with the same weights.

Each returns (seconds of the timed run, predictions [B, new_tokens])."""

from __future__ import annotations

import math
import time

import numpy as np
from scale_models import ROPE_BASE, ModelConfig, weights


def _window(pattern: str) -> int | None:
    kind, _, size = pattern.partition(":")
    if kind == "full":
        return None
    if kind == "window":
        return int(size)
    raise SystemExit(f"the PyTorch baselines run full or window attention, not '{pattern}'")


def run_torch(c: ModelConfig, pattern: str, prompts: list[int], steps: int, max_len: int):
    import torch
    import torch.nn.functional as F

    w = {k: torch.from_numpy(v) for k, v in weights(c, max_len).items()}
    window = _window(pattern)
    B, d, h, kvh, hd = len(prompts), c.d_model, c.heads, c.kv_heads, c.head_dim
    slots = steps if window is None else min(window, steps)
    cache = torch.zeros(c.layers, 2, B, kvh, slots, hd)
    if c.family == "qwen":
        half = hd // 2
        freq = ROPE_BASE ** (-torch.arange(half, dtype=torch.float64) * 2.0 / hd)
        inv = torch.cat([freq, freq]).float()

    def rope(x, t):  # x: (B, heads, hd), rotate-half as pdg.nn.rotary
        angle = t * inv
        x1, x2 = x[..., :half], x[..., half:]
        return x * torch.cos(angle) + torch.cat([-x2, x1], -1) * torch.sin(angle)

    def rms(x, g):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * g

    def decode(n: int):
        cache.zero_()
        token = torch.tensor(prompts)
        out = []
        with torch.inference_mode():
            for t in range(n):
                seen = min(t + 1, slots)
                at = t if window is None else t % slots
                if c.family == "gpt":
                    x = w["wte.w"][token] + w["wpe.w"][t]
                else:
                    x = w["embed.w"][token]
                for i in range(c.layers):
                    p = f"h{i}."
                    if c.family == "gpt":
                        a = F.layer_norm(x, (d,), w[p + "ln1.g"], w[p + "ln1.b"], eps=1e-5)
                    else:
                        a = rms(x, w[p + "ln1.g"])
                    q = torch.addmm(w[p + "attn.q.b"], a, w[p + "attn.q.w"]).view(B, h, hd)
                    k = torch.addmm(w[p + "attn.k.b"], a, w[p + "attn.k.w"]).view(B, kvh, hd)
                    v = torch.addmm(w[p + "attn.v.b"], a, w[p + "attn.v.w"]).view(B, kvh, hd)
                    if c.family == "qwen":
                        q, k = rope(q, t), rope(k, t)
                    cache[i, 0, :, :, at] = k
                    cache[i, 1, :, :, at] = v
                    # (B, kvh, seen, hd)
                    keys, values = cache[i, 0, :, :, :seen], cache[i, 1, :, :, :seen]
                    qg = q.view(B, kvh, h // kvh, hd)
                    scores = torch.matmul(qg, keys.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
                    att = torch.matmul(scores.softmax(-1), values).reshape(B, d)
                    if c.family == "gpt":
                        x = x + torch.addmm(w[p + "attn.o.b"], att, w[p + "attn.o.w"])
                        m = F.layer_norm(x, (d,), w[p + "ln2.g"], w[p + "ln2.b"], eps=1e-5)
                        m = torch.addmm(w[p + "mlp.fc.b"], m, w[p + "mlp.fc.w"])
                        m = F.gelu(m, approximate="tanh")
                        x = x + torch.addmm(w[p + "mlp.proj.b"], m, w[p + "mlp.proj.w"])
                    else:
                        x = x + att @ w[p + "attn.o.w"]  # o.b is zero (Qwen2 has none)
                        m = rms(x, w[p + "ln2.g"])
                        m = F.silu(m @ w[p + "mlp.gate.w"]) * (m @ w[p + "mlp.up.w"])
                        x = x + m @ w[p + "mlp.down.w"]
                if c.family == "gpt":
                    x = F.layer_norm(x, (d,), w["ln_f.g"], w["ln_f.b"], eps=1e-5)
                    logits = x @ w["wte.w"].T
                else:
                    logits = rms(x, w["norm.g"]) @ w["embed.w"].T
                token = torch.argmax(logits, -1)
                out.append(token)
        return out

    decode(min(4, steps))  # warm-up
    start = time.perf_counter()
    out = decode(steps)
    seconds = time.perf_counter() - start
    return seconds, torch.stack(out, 1).numpy().astype(np.int64)


def hf_model(c: ModelConfig, pattern: str, max_len: int):
    """A transformers model of config `c` holding scale_models' weights."""
    import torch

    window = _window(pattern)
    w = {k: torch.from_numpy(v) for k, v in weights(c, max_len).items()}
    if c.family == "gpt":
        from transformers import GPT2Config, GPT2LMHeadModel

        if window is not None:
            raise SystemExit("transformers' GPT-2 has no sliding-window attention")
        cfg = GPT2Config(
            vocab_size=c.vocab,
            n_positions=max_len,
            n_embd=c.d_model,
            n_layer=c.layers,
            n_head=c.heads,
            activation_function="gelu_new",
            layer_norm_epsilon=1e-5,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            tie_word_embeddings=True,
        )
        model = GPT2LMHeadModel(cfg)
        state = {
            "transformer.wte.weight": w["wte.w"],
            "transformer.wpe.weight": w["wpe.w"],
            "transformer.ln_f.weight": w["ln_f.g"],
            "transformer.ln_f.bias": w["ln_f.b"],
        }
        for i in range(c.layers):
            p, q = f"transformer.h.{i}.", f"h{i}."
            state |= {
                p + "ln_1.weight": w[q + "ln1.g"],
                p + "ln_1.bias": w[q + "ln1.b"],
                p + "ln_2.weight": w[q + "ln2.g"],
                p + "ln_2.bias": w[q + "ln2.b"],
                p + "attn.c_attn.weight": torch.cat([w[q + f"attn.{n}.w"] for n in "qkv"], 1),
                p + "attn.c_attn.bias": torch.cat([w[q + f"attn.{n}.b"] for n in "qkv"]),
                p + "attn.c_proj.weight": w[q + "attn.o.w"],
                p + "attn.c_proj.bias": w[q + "attn.o.b"],
                p + "mlp.c_fc.weight": w[q + "mlp.fc.w"],
                p + "mlp.c_fc.bias": w[q + "mlp.fc.b"],
                p + "mlp.c_proj.weight": w[q + "mlp.proj.w"],
                p + "mlp.c_proj.bias": w[q + "mlp.proj.b"],
            }
    else:
        from transformers import Qwen2Config, Qwen2ForCausalLM

        cfg = Qwen2Config(
            vocab_size=c.vocab,
            hidden_size=c.d_model,
            intermediate_size=c.mlp,
            num_hidden_layers=c.layers,
            num_attention_heads=c.heads,
            num_key_value_heads=c.kv_heads,
            max_position_embeddings=max_len,
            rms_norm_eps=1e-6,
            rope_parameters={"rope_type": "default", "rope_theta": ROPE_BASE},
            tie_word_embeddings=True,
            use_sliding_window=window is not None,
            sliding_window=window,
            max_window_layers=0,
            layer_types=["sliding_attention" if window else "full_attention"] * c.layers,
        )
        model = Qwen2ForCausalLM(cfg)
        state = {"model.embed_tokens.weight": w["embed.w"], "model.norm.weight": w["norm.g"]}
        for i in range(c.layers):
            p, q = f"model.layers.{i}.", f"h{i}."
            state |= {
                p + "input_layernorm.weight": w[q + "ln1.g"],
                p + "post_attention_layernorm.weight": w[q + "ln2.g"],
                p + "mlp.gate_proj.weight": w[q + "mlp.gate.w"].T,
                p + "mlp.up_proj.weight": w[q + "mlp.up.w"].T,
                p + "mlp.down_proj.weight": w[q + "mlp.down.w"].T,
            }
            for n in "qkv":
                state[p + f"self_attn.{n}_proj.weight"] = w[q + f"attn.{n}.w"].T
                state[p + f"self_attn.{n}_proj.bias"] = w[q + f"attn.{n}.b"]
            state[p + "self_attn.o_proj.weight"] = w[q + "attn.o.w"].T
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if k != "lm_head.weight"]  # tied to the embedding
    if missing or unexpected:
        raise SystemExit(f"hf weights do not fit: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    return model.eval()


def run_hf(c: ModelConfig, pattern: str, prompts: list[int], steps: int, max_len: int):
    import torch

    model = hf_model(c, pattern, max_len)
    ids = torch.tensor(prompts).view(-1, 1)

    def generate(n: int):
        return model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=n,
            min_new_tokens=n,
            do_sample=False,
            eos_token_id=None,
            pad_token_id=0,
        )

    with torch.inference_mode():
        generate(min(4, steps))  # warm-up
        start = time.perf_counter()
        out = generate(steps)
        seconds = time.perf_counter() - start
    return seconds, out[:, 1:].numpy().astype(np.int64)
