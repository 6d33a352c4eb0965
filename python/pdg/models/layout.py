"""Where each pdg parameter lives in a Hugging Face checkpoint, both ways.

Two layouts cover the supported families:
- "gpt2": `transformer.h.{i}.attn.c_attn.weight` holds q, k and v side by
  side (Conv1D weights are (d_in, d_out), pdg's orientation already);
- "llama" (Llama, Mistral, Qwen2, Qwen3): `model.layers.{i}.self_attn.
  q_proj.weight` and friends, torch Linear weights (d_out, d_in), so pdg's
  are their transposes.
A checkpoint of the bare model (GPT2Model, LlamaModel) has the names
without the `transformer.` / `model.` prefix; both are read. The head,
when not tied to the embedding, is `lm_head.weight` (vocab, d_model).

Pure NumPy: reading a state_dict (weights_from_state_dict) needs no
models extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from pdg.nn.decoder import Decoder, DecoderConfig

from .errors import ModelError

PREFIXES = {"gpt2": "transformer.", "llama": "model."}
HEAD = "lm_head.weight"
# Buffers some checkpoints hold that are not parameters (recomputed by the
# model): GPT-2's causal masks, rotary frequency tables.
IGNORED_SUFFIXES = (".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")


@dataclass(frozen=True)
class Rule:
    """pdg parameter `path` is Hugging Face tensor `name` (without the
    layout's prefix unless `top`), transposed or not; with `parts` > 1,
    the `part`-th of that many equal pieces of its last axis."""

    path: str
    name: str
    transpose: bool = False
    part: int = 0
    parts: int = 1
    top: bool = False  # outside the prefix (lm_head)


def hf_layout_of(names) -> str | None:
    """'gpt2' or 'llama' from the tensor names of a state_dict, else None
    (pdg's own names)."""
    for name in names:
        if name.endswith("attn.c_attn.weight"):
            return "gpt2"
        if name.endswith("self_attn.q_proj.weight"):
            return "llama"
    return None


def rules(config: DecoderConfig, layout: str) -> list[Rule]:
    """Every parameter of a Decoder of `config`, and where it is in `layout`."""
    if layout == "gpt2":
        out = _gpt2_rules(config)
    elif layout == "llama":
        out = _llama_rules(config)
    else:
        raise ModelError(f"unknown checkpoint layout '{layout}' (pdg knows gpt2 and llama)")
    if not config.tie_embeddings:
        out.append(Rule("lm_head.w", HEAD, transpose=True, top=True))
    return out


def _gpt2_rules(c: DecoderConfig) -> list[Rule]:
    out = [Rule("wte.w", "wte.weight"), Rule("wpe.w", "wpe.weight")]
    for i in range(c.n_layers):
        h = f"h.{i}."
        out += [Rule(f"h{i}.ln1.g", h + "ln_1.weight"), Rule(f"h{i}.ln1.b", h + "ln_1.bias")]
        # q, k and v side by side in one tensor (the pieces of one read in a row)
        for kind in ("weight", "bias"):
            for j, x in enumerate("qkv"):
                out.append(
                    Rule(f"h{i}.attn.{x}.{kind[0]}", h + f"attn.c_attn.{kind}", part=j, parts=3)
                )
        out += [
            Rule(f"h{i}.attn.o.w", h + "attn.c_proj.weight"),
            Rule(f"h{i}.attn.o.b", h + "attn.c_proj.bias"),
            Rule(f"h{i}.ln2.g", h + "ln_2.weight"),
            Rule(f"h{i}.ln2.b", h + "ln_2.bias"),
            Rule(f"h{i}.mlp.fc.w", h + "mlp.c_fc.weight"),
            Rule(f"h{i}.mlp.fc.b", h + "mlp.c_fc.bias"),
            Rule(f"h{i}.mlp.proj.w", h + "mlp.c_proj.weight"),
            Rule(f"h{i}.mlp.proj.b", h + "mlp.c_proj.bias"),
        ]
    return out + [Rule("ln_f.g", "ln_f.weight"), Rule("ln_f.b", "ln_f.bias")]


def _llama_rules(c: DecoderConfig) -> list[Rule]:
    out = [Rule("wte.w", "embed_tokens.weight")]

    def linear(path: str, name: str, bias: bool) -> list[Rule]:
        got = [Rule(f"{path}.w", f"{name}.weight", transpose=True)]
        return got + ([Rule(f"{path}.b", f"{name}.bias")] if bias else [])

    for i in range(c.n_layers):
        h = f"layers.{i}."
        out.append(Rule(f"h{i}.ln1.g", h + "input_layernorm.weight"))
        for x in "qkv":
            out += linear(f"h{i}.attn.{x}", h + f"self_attn.{x}_proj", c.qkv_bias)
        out += linear(f"h{i}.attn.o", h + "self_attn.o_proj", c.o_bias)
        if c.qk_norm:
            out.append(Rule(f"h{i}.attn.q_norm.g", h + "self_attn.q_norm.weight"))
            out.append(Rule(f"h{i}.attn.k_norm.g", h + "self_attn.k_norm.weight"))
        out.append(Rule(f"h{i}.ln2.g", h + "post_attention_layernorm.weight"))
        for x in ("gate", "up", "down"):
            out += linear(f"h{i}.mlp.{x}", h + f"mlp.{x}_proj", c.mlp_bias)
    return out + [Rule("ln_f.g", "norm.weight")]


def resolve(rule: Rule, layout: str, names) -> str | None:
    """The checkpoint's name for `rule` among `names` (with or without the
    layout's prefix), or None."""
    candidates = [rule.name] if rule.top else [PREFIXES[layout] + rule.name, rule.name]
    return next((n for n in candidates if n in names), None)


def to_pdg(array: np.ndarray, rule: Rule, dtype=np.float32) -> np.ndarray:
    """The checkpoint tensor as pdg's parameter: its piece, transposed,
    contiguous, in `dtype` (one copy at most; none when it already is)."""
    if rule.parts > 1:
        n = array.shape[-1] // rule.parts
        array = array[..., rule.part * n : (rule.part + 1) * n]
    if rule.transpose:
        array = array.T
    return np.ascontiguousarray(array, dtype=dtype)


def convert(
    config: DecoderConfig,
    layout: str,
    names,
    fetch: Callable[[str], np.ndarray],
    where: Callable[[str], str] = lambda name: "the state_dict",
    dtype=np.float32,
) -> dict[str, np.ndarray]:
    """pdg's weights by path from the checkpoint tensors `names`, read one
    at a time with `fetch(name)` (each shape checked against the config).
    `where(name)` says which file holds a name, for the errors."""
    names = set(names)
    out: dict[str, np.ndarray] = {}
    expected = {r.path: shape for r, shape in _shapes(config, layout)}
    cache: dict[str, np.ndarray] = {}  # a fused tensor, while its pieces are cut
    for rule in rules(config, layout):
        name = resolve(rule, layout, names)
        if name is None:
            wanted = rule.name if rule.top else PREFIXES[layout] + rule.name
            raise ModelError(
                f"{where(wanted)}: the checkpoint has no tensor '{wanted}', which "
                f"the config's model needs (for pdg's '{rule.path}')"
            )
        if name in cache:
            array = cache[name]
        else:
            array = fetch(name)
            cache.clear()
            if rule.parts > 1:
                cache[name] = array
        want = expected[rule.path]
        have = _hf_shape(want, rule)
        if tuple(array.shape) != have:
            raise ModelError(
                f"{where(name)}: tensor '{name}' has shape {list(array.shape)}, but the config "
                f"says {list(have)}"
            )
        out[rule.path] = to_pdg(array, rule, dtype)
    return out


def from_hf_names(arrays: Mapping[str, np.ndarray], config: DecoderConfig, layout: str) -> dict:
    """pdg's weights from a Hugging Face state_dict held in memory."""
    return convert(config, layout, arrays.keys(), lambda name: np.asarray(arrays[name]))


def unused(names, config: DecoderConfig, layout: str) -> list[str]:
    """The checkpoint tensors that no parameter of the model reads (buffers
    the model recomputes aside, and a tied head's copy)."""
    used = {resolve(r, layout, names) for r in rules(config, layout)}
    return sorted(
        n
        for n in names
        if n not in used
        and not n.endswith(IGNORED_SUFFIXES)
        and not (n == HEAD and config.tie_embeddings)
    )


def to_hf(weights: Mapping[str, np.ndarray], config: DecoderConfig, layout: str) -> dict:
    """The Hugging Face tensors (full names, as AutoModelForCausalLM saves
    them) of pdg's weights by path; fused tensors are put back together."""
    pieces: dict[str, list] = {}
    out: dict[str, np.ndarray] = {}
    for rule, shape in _shapes(config, layout):
        if rule.path not in weights:
            raise ModelError(f"the weights have no '{rule.path}', which the model needs")
        array = np.asarray(weights[rule.path])
        if tuple(array.shape) != shape:
            raise ModelError(
                f"weight '{rule.path}' has shape {list(array.shape)}, the model's is {list(shape)}"
            )
        name = rule.name if rule.top else PREFIXES[layout] + rule.name
        if rule.transpose:
            array = array.T
        if rule.parts > 1:
            pieces.setdefault(name, [None] * rule.parts)[rule.part] = array
            if all(p is not None for p in pieces[name]):
                out[name] = np.ascontiguousarray(np.concatenate(pieces[name], axis=-1))
        else:
            out[name] = np.ascontiguousarray(array)
    return out


def weights_from_state_dict(model: Decoder, state: Mapping[str, object]) -> dict[str, np.ndarray]:
    """The weights by path of `model` (a pdg.nn Decoder) from a PyTorch
    state_dict: pdg's own names, or a Hugging Face model's of the GPT-2 or
    the Llama layout (`transformer.h.0.attn.c_attn.weight`,
    `model.layers.0.self_attn.q_proj.weight`, ...)."""
    arrays = {k: _to_numpy(v) for k, v in state.items()}
    layout = hf_layout_of(arrays)
    if layout is not None:
        arrays = from_hf_names(arrays, model.config, layout)
    return model.inputs_from(arrays)


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _shapes(config: DecoderConfig, layout: str):
    """(rule, pdg shape) of every parameter, from the model's own
    declaration (a throwaway program: no MLIR is built)."""
    from pdg.frontend import Program

    params = Decoder(Program("shapes"), config).parameters()
    return [(r, tuple(params[r.path].shape)) for r in rules(config, layout)]


def _hf_shape(shape: tuple, rule: Rule) -> tuple:
    """The checkpoint tensor's shape for pdg parameter `shape`."""
    if rule.transpose:
        shape = shape[::-1]
    if rule.parts > 1:
        shape = (*shape[:-1], shape[-1] * rule.parts)
    return tuple(shape)
