"""The models of the scale benchmark (bench/scale.py): their shapes, seeded
weights by parameter path, and the pdg decode program of each.

Two families:
- `gpt`: GPT-2 (learned positions, LayerNorm, GELU MLP, biases), built
  with pdg.nn.GPT and pdg.programs.build_decode, as a user would;
- `qwen`: Qwen2-style (RMSNorm, rotary positions, grouped-query attention
  with q/k/v biases, SwiGLU MLP without biases, tied logits). pdg.nn on
  main has the pieces but no model class for them yet, so `QwenStyle`
  below assembles them; it is the one place to switch to pdg.nn's
  decoder family once it exists.

Weights are random (normal * WEIGHT_SCALE; norms' gains 1, biases 0).
WEIGHT_SCALE is GPT-2's initializer std, 0.02. At scale 1 the attention
scores of a 768-wide GPT-2 reach the hundreds, so attention picks one key
and a near-tie between two keys, which summation order decides, sends pdg,
pdg-vec and PyTorch onto different tokens (gpt2-124m at batch 8: three
CRCs in three implementations). At 0.02 the scores are of order 1, and
pdg, pdg-vec and PyTorch agree token for token there (64 steps at batch
8; bench/RESULTS.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

WEIGHT_SCALE = 0.02
ROPE_BASE = 10000.0  # pdg.nn.rotary's base (Qwen2.5 uses 1e6; the shape is what matters here)


@dataclass(frozen=True)
class ModelConfig:
    name: str
    family: str  # gpt | qwen
    vocab: int
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    mlp: int  # hidden width of the MLP

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def with_layers(self, layers: int) -> ModelConfig:
        """The same shape at another depth (compile-time growth)."""
        return replace(self, name=f"{self.name.split('@')[0]}@{layers}L", layers=layers)


CONFIGS = {
    "gpt2-124m": ModelConfig("gpt2-124m", "gpt", 50257, 768, 12, 12, 12, 4 * 768),
    "qwen2.5-0.5b": ModelConfig("qwen2.5-0.5b", "qwen", 151936, 896, 24, 14, 2, 4864),
}


def parse_config(text: str) -> ModelConfig:
    """'gpt2-124m', or 'gpt2-124m@2L' for the same shape with 2 layers."""
    name, _, depth = text.partition("@")
    if name not in CONFIGS:
        raise SystemExit(f"unknown config '{name}'; choose from {', '.join(CONFIGS)}")
    config = CONFIGS[name]
    if depth:
        if not (depth.endswith("L") and depth[:-1].isdigit() and int(depth[:-1]) > 0):
            raise SystemExit(f"bad depth '{depth}' in '{text}': write e.g. {name}@2L")
        config = config.with_layers(int(depth[:-1]))
    return config


def shapes(c: ModelConfig, max_len: int) -> dict[str, tuple[int, ...]]:
    """Every weight's shape by pdg parameter path."""
    d, f, kv = c.d_model, c.mlp, c.kv_heads * c.head_dim
    if c.family == "gpt":
        out = {"wte.w": (c.vocab, d), "wpe.w": (max_len, d), "ln_f.g": (d,), "ln_f.b": (d,)}
        for i in range(c.layers):
            p = f"h{i}."
            out |= {p + n: (d,) for n in ("ln1.g", "ln1.b", "ln2.g", "ln2.b")}
            for n in "qkvo":
                out |= {p + f"attn.{n}.w": (d, d), p + f"attn.{n}.b": (d,)}
            out |= {p + "mlp.fc.w": (d, f), p + "mlp.fc.b": (f,)}
            out |= {p + "mlp.proj.w": (f, d), p + "mlp.proj.b": (d,)}
        return out
    out = {"embed.w": (c.vocab, d), "norm.g": (d,)}
    for i in range(c.layers):
        p = f"h{i}."
        out |= {p + "ln1.g": (d,), p + "ln2.g": (d,)}
        out |= {p + "attn.q.w": (d, d), p + "attn.q.b": (d,)}
        out |= {p + "attn.k.w": (d, kv), p + "attn.k.b": (kv,)}
        out |= {p + "attn.v.w": (d, kv), p + "attn.v.b": (kv,)}
        out |= {p + "attn.o.w": (d, d), p + "attn.o.b": (d,)}  # o.b: zeros (Qwen2 has none)
        out |= {p + "mlp.gate.w": (d, f), p + "mlp.up.w": (d, f), p + "mlp.down.w": (f, d)}
    return out


def weights(c: ModelConfig, max_len: int, seed: int = 0, dtype_of=None) -> dict[str, np.ndarray]:
    """Seeded float32 weights by path: normal * WEIGHT_SCALE, gains 1,
    biases 0. `dtype_of(path)`: a dtype to round each one to as it is made
    (bf16 weights: the f32 model is never held whole)."""
    rng = np.random.default_rng(seed)
    out = {}
    for path, shape in sorted(shapes(c, max_len).items()):
        leaf = path.rsplit(".", 1)[-1]
        if leaf == "g":
            w = np.ones(shape, np.float32)
        elif leaf == "b":
            w = np.zeros(shape, np.float32)
        else:
            w = rng.standard_normal(shape, dtype=np.float32) * np.float32(WEIGHT_SCALE)
        out[path] = w if dtype_of is None else w.astype(dtype_of(path), copy=False)
    return out


def streamed_bytes(c: ModelConfig, max_len: int, weights: str = "f32") -> int:
    """Bytes of weights a decode step must read: all of them, except the
    rows of the position table it does not use (the token table is read
    whole by the tied logits). With weights="bf16" the matrices and tables
    (the `.w` leaves) take 2 bytes per element, norms and biases 4."""
    matrix_bytes = 2 if weights == "bf16" else 4
    total = 0
    for path, shape in shapes(c, max_len).items():
        total += int(np.prod(shape)) * (matrix_bytes if path.endswith(".w") else 4)
    if c.family == "gpt":
        total -= (max_len - 1) * c.d_model * matrix_bytes
    return total


def matrix_params(c: ModelConfig) -> int:
    """Multiply-adds per token of the matrix products (logits included)."""
    d, f, kv = c.d_model, c.mlp, c.kv_heads * c.head_dim
    per_layer = 2 * d * d + 2 * d * kv + (2 if c.family == "gpt" else 3) * d * f
    return c.layers * per_layer + c.vocab * d


# --- pdg programs ----------------------------------------------------------------


def build_program(c: ModelConfig, pattern: str, max_len: int, max_batch: int, weights: str = "f32"):
    """The greedy decode program (prompt width 1, a response limit per
    sequence, no logits output) and its model; weights="bf16" stores the
    matrices and tables in bf16 (pdg.nn's weight_dtype)."""
    weight_dtype = "bf16" if weights == "bf16" else None
    from pdg.nn import AttentionPattern, GPTConfig
    from pdg.programs import build_decode

    attention = AttentionPattern.parse(pattern)
    if c.family == "gpt":
        cfg = GPTConfig(
            vocab=c.vocab,
            d_model=c.d_model,
            n_layers=c.layers,
            n_heads=c.heads,
            max_positions=max_len,
            pattern=attention,
            weight_dtype=weight_dtype,
        )
        decode = build_decode(
            cfg,
            eos=-1,
            max_len=max_len,
            prompt_width=1,
            max_batch=max_batch,
            response_limit=True,
            output_logits=False,
        )
        return decode.program, decode.model
    return _build_qwen_decode(c, attention, max_len, max_batch, weight_dtype)


# -- Qwen2-style, from pdg.nn's layers (to be replaced by pdg.nn's decoder family) --


def _qwen_model_class():
    import pdg.frontend as pf
    from pdg.nn import Attention, Embedding, Linear, Module, RMSNorm
    from pdg.nn.layers import tied_logits

    class SwiGLU(Module):
        def __init__(self, program, path, d: int, hidden: int, wd):
            super().__init__(program, path)
            for name, i, o in (("gate", d, hidden), ("up", d, hidden), ("down", hidden, d)):
                linear = Linear(program, f"{path}.{name}", i, o, bias=False, weight_dtype=wd)
                setattr(self, name, self.child(linear))

        def __call__(self, x):
            return self.down(pf.silu(self.gate(x)) * self.up(x))

    class QwenStyle(Module):
        def __init__(self, program, c: ModelConfig, pattern, wd):
            super().__init__(program, "")
            self.embed = self.child(
                Embedding(program, "embed", c.vocab, c.d_model, weight_dtype=wd)
            )
            self.blocks = []
            for i in range(c.layers):
                p = f"h{i}"
                self.blocks.append(
                    (
                        self.child(RMSNorm(program, f"{p}.ln1", c.d_model)),
                        self.child(
                            Attention(
                                program,
                                f"{p}.attn",
                                c.d_model,
                                c.heads,
                                c.kv_heads,
                                pattern,
                                rope=True,
                                weight_dtype=wd,
                            )
                        ),
                        self.child(RMSNorm(program, f"{p}.ln2", c.d_model)),
                        self.child(SwiGLU(program, f"{p}.mlp", c.d_model, c.mlp, wd)),
                    )
                )
            self.norm = self.child(RMSNorm(program, "norm", c.d_model))

        def __call__(self, token, position, step):
            x = self.embed(token)
            for ln1, attn, ln2, mlp in self.blocks:
                x = x + attn(ln1(x), step, position)
                x = x + mlp(ln2(x))
            return tied_logits(self.norm(x), self.embed.table)

    return QwenStyle


def _build_qwen_decode(c: ModelConfig, attention, max_len: int, max_batch: int, wd):
    """build_decode's greedy program around QwenStyle."""
    import pdg.frontend as pf

    prog = pf.Program("decode")
    b = prog.dim("b", launch="B", max=max_batch)
    t = prog.dim("t", dynamic="T", max=max_len)
    model = _qwen_model_class()(prog, c, attention, wd)
    prompt = prog.input("prompt", (1,), "i64", domain=[b])
    pos = prog.coordinate(t).named("pos")
    first = pf.take(prompt, pf.minimum(pos, 0), axis=0).named("prompt_tok")
    nxt = prog.recurrent((), "i64", domain=[b, t], name="next")
    tok = prog.recurrent((), "i64", domain=[b, t], name="tok")
    tok[t == 0] = first
    tok[t > 0] = nxt[t - 1]
    logits = model(tok, pos, t).named("logits")
    nxt[...] = pf.argmax(logits)
    limit = prog.input("limit", (), "i64", domain=[b])
    t.until((pos + 1 >= limit).named("done"))
    prog.output("tokens", nxt)
    return prog, model
