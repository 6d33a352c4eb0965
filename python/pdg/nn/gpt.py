"""A GPT-2-style decoder and its weights' names.

Parameters are named by path (`wte.w`, `h0.attn.q.w`, `h0.ln1.g`, ...);
`GPT.weights_from_state_dict` converts a Hugging Face GPT-2 state_dict
(fused c_attn, Conv1D layout) or one with our own names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

import pdg.frontend as pf
from pdg.frontend import Dim, TensorLike

from .attention import Attention, AttentionPattern
from .layers import MLP, Embedding, LayerNorm, Module


@dataclass(frozen=True)
class GPTConfig:
    vocab: int = 1024
    d_model: int = 256
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int | None = None
    max_positions: int = 4096
    pattern: AttentionPattern = field(default_factory=AttentionPattern)
    dtype: str = "f32"


class GPT(Module):
    """Token + position embeddings, pre-norm blocks (attention, MLP), final
    norm, logits tied to the token embedding."""

    def __init__(self, program, config: GPTConfig, path: str = ""):
        super().__init__(program, path)
        c, self.config = config, config

        def sub(name: str) -> str:
            return f"{path}.{name}" if path else name

        self.wte = self.child(Embedding(program, sub("wte"), c.vocab, c.d_model, c.dtype))
        self.wpe = self.child(Embedding(program, sub("wpe"), c.max_positions, c.d_model, c.dtype))
        self.blocks = []
        for i in range(c.n_layers):
            ln1 = self.child(LayerNorm(program, sub(f"h{i}.ln1"), c.d_model, dtype=c.dtype))
            attn = self.child(
                Attention(
                    program,
                    sub(f"h{i}.attn"),
                    c.d_model,
                    c.n_heads,
                    c.n_kv_heads,
                    c.pattern,
                    dtype=c.dtype,
                )
            )
            ln2 = self.child(LayerNorm(program, sub(f"h{i}.ln2"), c.d_model, dtype=c.dtype))
            mlp = self.child(MLP(program, sub(f"h{i}.mlp"), c.d_model, 4 * c.d_model, c.dtype))
            self.blocks.append((ln1, attn, ln2, mlp))
        self.ln_f = self.child(LayerNorm(program, sub("ln_f"), c.d_model, dtype=c.dtype))

    def __call__(self, token: TensorLike, position: TensorLike, step: Dim) -> TensorLike:
        """Logits (vocab,) for the token at `position`, attending along `step`."""
        return self.hidden(token, position, step) @ self.wte.table.T

    def hidden(self, token: TensorLike, position: TensorLike, step: Dim) -> TensorLike:
        """The final normalized hidden state (d_model,): what the logits and
        a value head read."""
        x = self.wte(token) + self.wpe(position)
        for ln1, attn, ln2, mlp in self.blocks:
            x = x + attn(ln1(x), step, position)
            x = x + mlp(ln2(x))
        return self.ln_f(x)

    # -- weights ------------------------------------------------------------
    def weights_from_state_dict(self, state: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Weights by path from a PyTorch state_dict: ours, or Hugging Face
        GPT-2's (`transformer.h.0.attn.c_attn.weight`, ...)."""
        arrays = {k: _to_numpy(v) for k, v in state.items()}
        if any(k.endswith("attn.c_attn.weight") for k in arrays):
            arrays = _from_hf_gpt2(arrays, self.config)
        return self.inputs_from(arrays)


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _from_hf_gpt2(sd: dict, c: GPTConfig) -> dict:
    def get(name):
        for prefix in ("transformer.", ""):
            if prefix + name in sd:
                return sd[prefix + name]
        raise KeyError(name)

    out = {
        "wte.w": get("wte.weight"),
        "wpe.w": get("wpe.weight"),
        "ln_f.g": get("ln_f.weight"),
        "ln_f.b": get("ln_f.bias"),
    }
    d = c.d_model
    for i in range(c.n_layers):
        p = f"h.{i}."
        w, b = get(p + "attn.c_attn.weight"), get(p + "attn.c_attn.bias")
        for j, name in enumerate("qkv"):
            out[f"h{i}.attn.{name}.w"] = w[:, j * d : (j + 1) * d]
            out[f"h{i}.attn.{name}.b"] = b[j * d : (j + 1) * d]
        out[f"h{i}.attn.o.w"] = get(p + "attn.c_proj.weight")
        out[f"h{i}.attn.o.b"] = get(p + "attn.c_proj.bias")
        out[f"h{i}.ln1.g"], out[f"h{i}.ln1.b"] = get(p + "ln_1.weight"), get(p + "ln_1.bias")
        out[f"h{i}.ln2.g"], out[f"h{i}.ln2.b"] = get(p + "ln_2.weight"), get(p + "ln_2.bias")
        out[f"h{i}.mlp.fc.w"] = get(p + "mlp.c_fc.weight")
        out[f"h{i}.mlp.fc.b"] = get(p + "mlp.c_fc.bias")
        out[f"h{i}.mlp.proj.w"] = get(p + "mlp.c_proj.weight")
        out[f"h{i}.mlp.proj.b"] = get(p + "mlp.c_proj.bias")
    return out


__all__ = ["GPT", "GPTConfig", "pf"]
