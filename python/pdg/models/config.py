"""A Hugging Face `config.json` as a pdg DecoderConfig, and back.

The fields and their defaults (when a key is absent) are those of
transformers' GPT2Config, LlamaConfig, MistralConfig, Qwen2Config and
Qwen3Config. RoPE parameters come in two spellings: `rope_parameters`
(transformers 5) or `rope_theta` + `rope_scaling` (earlier checkpoints).
Anything pdg cannot run the same way (another RoPE type, scaled attention
by layer index, a partial rotary dim, ...) is refused by name, never
silently ignored.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pdg.frontend import ProgramError
from pdg.nn.attention import AttentionPattern
from pdg.nn.decoder import DecoderConfig
from pdg.nn.rope import RopeScaling

from .errors import ModelError

MODEL_TYPES = ("gpt2", "llama", "mistral", "qwen2", "qwen3")
LAYOUTS = {"gpt2": "gpt2", "llama": "llama", "mistral": "llama", "qwen2": "llama", "qwen3": "llama"}

# transformers' activation names -> pdg's (gelu_new and gelu_fast are the
# same tanh formula).
ACTIVATIONS = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "gelu": "gelu",
    "silu": "silu",
    "swish": "silu",
    "relu": "relu",
}
_REQUIRED = object()


class Fields:
    """Typed reads of config.json keys; errors name the file and the key."""

    def __init__(self, data: dict, file: Path | str):
        self.data, self.file = data, file

    def get(self, key: str, kind: type | tuple, default=_REQUIRED):
        if key not in self.data or (self.data[key] is None and default is not _REQUIRED):
            if default is _REQUIRED:
                raise ModelError(f"{self.file}: the key '{key}' is missing")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and bool not in kinds:
            value = None  # a bool is not a number here
        if not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise ModelError(f"{self.file}: '{key}' must be {names}, got {self.data[key]!r}")
        return value

    def positive(self, key: str, default=_REQUIRED) -> int:
        value = self.get(key, int, default)
        if value is not None and value < 1:
            raise ModelError(f"{self.file}: '{key}' must be a positive integer, got {value}")
        return value

    def unsupported(self, key: str, what: str) -> ModelError:
        return ModelError(
            f"{self.file}: '{key}' = {self.data.get(key)!r} is not supported by pdg ({what})"
        )


def model_type(hf: dict, file: Path | str) -> str:
    kind = Fields(hf, file).get("model_type", str)
    if kind not in MODEL_TYPES:
        raise ModelError(
            f"{file}: model_type '{kind}' is not supported; pdg runs {', '.join(MODEL_TYPES)}"
        )
    return kind


def decoder_config(hf: dict, file: Path | str = "config.json") -> DecoderConfig:
    """The DecoderConfig of a config.json's contents."""
    if not isinstance(hf, dict):
        raise ModelError(f"{file}: expected a JSON object, got {type(hf).__name__}")
    kind = model_type(hf, file)
    f = Fields(hf, file)
    try:
        if kind == "gpt2":
            return _gpt2(f)
        return _llama_family(f, kind)
    except ProgramError as e:  # DecoderConfig's own checks, on values from the file
        raise ModelError(f"{file}: {e.message}") from None


def _activation(f: Fields, key: str, default: str) -> str:
    name = f.get(key, str, default)
    if name not in ACTIVATIONS:
        raise ModelError(
            f"{f.file}: '{key}' = '{name}' is not supported; pdg has "
            f"{', '.join(sorted(ACTIVATIONS))}"
        )
    return ACTIVATIONS[name]


def _gpt2(f: Fields) -> DecoderConfig:
    if not f.get("scale_attn_weights", bool, True):
        raise f.unsupported("scale_attn_weights", "attention scores are scaled by 1/sqrt(head_dim)")
    if f.get("scale_attn_by_inverse_layer_idx", bool, False):
        raise f.unsupported("scale_attn_by_inverse_layer_idx", "scores are not scaled by layer")
    if f.get("add_cross_attention", bool, False):
        raise f.unsupported("add_cross_attention", "a decoder-only model has no cross-attention")
    return DecoderConfig(
        vocab=f.positive("vocab_size", 50257),
        d_model=f.positive("n_embd", 768),
        n_layers=f.positive("n_layer", 12),
        n_heads=f.positive("n_head", 12),
        max_positions=f.positive("n_positions", 1024),
        d_ff=f.positive("n_inner", None),
        activation=_activation(f, "activation_function", "gelu_new"),
        norm_eps=f.get("layer_norm_epsilon", float, 1e-5),
        tie_embeddings=f.get("tie_word_embeddings", bool, True),
    )


# Defaults of the keys whose default differs between the families.
_DEFAULTS = {
    "llama": {"max_position_embeddings": 2048, "head_dim": None},
    "mistral": {"max_position_embeddings": 4096 * 32, "head_dim": None},
    "qwen2": {"max_position_embeddings": 32768, "head_dim": None},
    "qwen3": {"max_position_embeddings": 32768, "head_dim": 128},
}


def _llama_family(f: Fields, kind: str) -> DecoderConfig:
    defaults = _DEFAULTS[kind]
    d = f.positive("hidden_size", 4096)
    heads = f.positive("num_attention_heads", 32)
    head_dim = f.positive("head_dim", defaults["head_dim"])
    layers = f.positive("num_hidden_layers", 32)
    max_positions = f.positive("max_position_embeddings", defaults["max_position_embeddings"])
    if kind == "llama":
        qkv_bias = o_bias = f.get("attention_bias", bool, False)
        mlp_bias = f.get("mlp_bias", bool, False)
    elif kind == "qwen3":
        qkv_bias = o_bias = f.get("attention_bias", bool, False)
        mlp_bias = False
    elif kind == "qwen2":
        qkv_bias, o_bias, mlp_bias = True, False, False
    else:
        qkv_bias = o_bias = mlp_bias = False
    theta, scaling = _rope(f, max_positions)
    return DecoderConfig(
        vocab=f.positive("vocab_size", 32000),
        d_model=d,
        n_layers=layers,
        n_heads=heads,
        n_kv_heads=f.positive("num_key_value_heads", heads),
        head_dim=head_dim,
        d_ff=f.positive("intermediate_size", 11008),
        max_positions=max_positions,
        positions="rotary",
        rope_theta=theta,
        rope_scaling=scaling,
        norm="rmsnorm",
        norm_eps=f.get("rms_norm_eps", float, 1e-6),
        activation=_activation(f, "hidden_act", "silu"),
        gated_mlp=True,
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        mlp_bias=mlp_bias,
        qk_norm=kind == "qwen3",
        tie_embeddings=f.get("tie_word_embeddings", bool, False),
        layer_patterns=_layer_patterns(f, kind, layers),
    )


def _layer_patterns(f: Fields, kind: str, layers: int) -> tuple[AttentionPattern, ...] | None:
    """Each layer's attention: Mistral's window on every layer; Qwen's on
    the layers `layer_types` marks sliding (from max_window_layers on when
    absent), and only with use_sliding_window."""
    if kind == "llama":
        return None
    if kind == "mistral":
        window = f.positive("sliding_window", 4096)
        return None if window is None else (AttentionPattern("window", window),) * layers
    window = (
        f.positive("sliding_window", 4096) if f.get("use_sliding_window", bool, False) else None
    )
    types = f.get("layer_types", list, None)
    if types is None:
        first = f.get("max_window_layers", int, 28)
        types = ["sliding_attention" if i >= first else "full_attention" for i in range(layers)]
    if len(types) != layers:
        raise ModelError(
            f"{f.file}: 'layer_types' has {len(types)} entries for {layers} layers "
            "('num_hidden_layers')"
        )
    patterns = []
    for i, name in enumerate(types):
        if name not in ("full_attention", "sliding_attention"):
            raise ModelError(
                f"{f.file}: 'layer_types'[{i}] = {name!r} is not supported; pdg runs "
                "'full_attention' and 'sliding_attention'"
            )
        slide = name == "sliding_attention" and window is not None
        patterns.append(AttentionPattern("window", window) if slide else AttentionPattern())
    if all(p.kind == "full" for p in patterns):
        return None
    return tuple(patterns)


def _rope(f: Fields, max_positions: int) -> tuple[float, RopeScaling | None]:
    """(theta, scaling) from rope_parameters, or rope_theta + rope_scaling."""
    key = "rope_parameters" if f.data.get("rope_parameters") is not None else "rope_scaling"
    params = f.get(key, dict, None) or {}
    layer_types = set(f.data.get("layer_types") or ())
    if params and set(params) & layer_types:
        raise f.unsupported(key, "RoPE parameters per layer type")
    p = Fields(params, f"{f.file}: '{key}'")
    theta = p.get("rope_theta", float, None)
    if theta is None:
        theta = f.get("rope_theta", float, 10000.0)
    partial = p.get("partial_rotary_factor", float, None)
    if partial is None:
        partial = f.get("partial_rotary_factor", float, 1.0)
    if partial != 1.0:
        raise ModelError(
            f"{f.file}: partial_rotary_factor = {partial} is not supported (pdg rotates the "
            "whole head dim)"
        )
    kind = p.get("rope_type", str, None) or p.get("type", str, "default")
    if kind == "default":
        return theta, None
    if kind == "linear":
        return theta, RopeScaling("linear", p.get("factor", float))
    if kind == "llama3":
        original = p.get("original_max_position_embeddings", int, None)
        if original is None:
            original = f.get("original_max_position_embeddings", int, max_positions)
        return theta, RopeScaling(
            "llama3",
            p.get("factor", float),
            p.get("low_freq_factor", float),
            p.get("high_freq_factor", float),
            original,
        )
    raise ModelError(
        f"{f.file}: '{key}' has rope_type '{kind}', which pdg does not support "
        "(it runs 'default', 'linear' and 'llama3')"
    )


# -- export -------------------------------------------------------------------


def hf_config(config: DecoderConfig, base: dict | None = None) -> dict:
    """A config.json for `config`: `base` (the checkpoint it came from) with
    the architecture's keys set from `config`, or a new one. Refuses a
    config no supported model_type expresses; the result reads back as
    `config` (checked)."""
    kind = _export_type(config)
    keys = _gpt2_keys(config) if kind == "gpt2" else _llama_keys(config, kind)
    out = dict(base) if base and base.get("model_type") == kind else {}
    if out.get("model_type") != kind:
        out = {"architectures": [_ARCHITECTURES[kind]], "model_type": kind}
    out.pop("torch_dtype", None)
    out.pop("rope_scaling", None)
    out.pop("rope_theta", None)
    out.update(keys)
    out["dtype"] = "float32"
    back = decoder_config(out, "the exported config")
    if _comparable(back) != _comparable(config):
        raise ModelError(
            "this model's configuration has no exact Hugging Face equivalent (exported as "
            f"{kind}, it would read back as {back})"
        )
    return out


_ARCHITECTURES = {
    "gpt2": "GPT2LMHeadModel",
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
}
_PDG_ACTIVATIONS = {"gelu_tanh": "gelu_new", "gelu": "gelu", "silu": "silu", "relu": "relu"}


def _comparable(c: DecoderConfig) -> DecoderConfig:
    """`c` as a config.json says it: patterns per layer (None when all are
    full), defaults made explicit, fields that do not apply at their
    defaults."""
    patterns = c.layer_patterns or (c.pattern,) * c.n_layers
    if all(p.kind == "full" for p in patterns):
        patterns = None
    rotary = c.positions == "rotary"
    return replace(
        c,
        pattern=AttentionPattern(),
        layer_patterns=patterns,
        dtype="f32",
        n_kv_heads=c.n_kv_heads or c.n_heads,
        head_dim=c.attention_head_dim,
        d_ff=c.mlp_hidden,
        rope_theta=c.rope_theta if rotary else 10000.0,
        rope_scaling=c.rope_scaling if rotary else None,
    )


def _export_type(c: DecoderConfig) -> str:
    """The model_type that can say `c` if any can (hf_config checks it)."""
    patterns = c.layer_patterns or (c.pattern,)
    if any(p.kind == "block" for p in patterns):
        raise ModelError(
            "block attention has no Hugging Face equivalent; export needs full or window"
        )
    if c.positions == "learned":
        return "gpt2"
    if c.qk_norm:
        return "qwen3"
    if c.qkv_bias and not c.o_bias:
        return "qwen2"
    if any(p.kind == "window" for p in patterns):
        return "mistral"
    return "llama"


def _gpt2_keys(c: DecoderConfig) -> dict:
    return {
        "vocab_size": c.vocab,
        "n_embd": c.d_model,
        "n_layer": c.n_layers,
        "n_head": c.n_heads,
        "n_positions": c.max_positions,
        "n_inner": c.d_ff,
        "activation_function": _PDG_ACTIVATIONS[c.activation],
        "layer_norm_epsilon": c.norm_eps,
        "tie_word_embeddings": c.tie_embeddings,
    }


def _llama_keys(c: DecoderConfig, kind: str) -> dict:
    rope: dict = {"rope_type": "default", "rope_theta": c.rope_theta}
    if c.rope_scaling is not None:
        s = c.rope_scaling
        rope = {"rope_type": s.kind, "rope_theta": c.rope_theta, "factor": s.factor}
        if s.kind == "llama3":
            rope.update(
                low_freq_factor=s.low_freq_factor,
                high_freq_factor=s.high_freq_factor,
                original_max_position_embeddings=s.original_max_positions,
            )
    keys = {
        "vocab_size": c.vocab,
        "hidden_size": c.d_model,
        "num_hidden_layers": c.n_layers,
        "num_attention_heads": c.n_heads,
        "num_key_value_heads": c.n_kv_heads or c.n_heads,
        "intermediate_size": c.mlp_hidden,
        "max_position_embeddings": c.max_positions,
        "rms_norm_eps": c.norm_eps,
        "hidden_act": _PDG_ACTIVATIONS[c.activation],
        "tie_word_embeddings": c.tie_embeddings,
        "rope_parameters": rope,
    }
    if c.head_dim is not None or kind == "qwen3":  # Qwen3's default is 128, not d / heads
        keys["head_dim"] = c.attention_head_dim
    if kind in ("llama", "qwen3"):
        keys["attention_bias"] = c.qkv_bias
    if kind == "llama":
        keys["mlp_bias"] = c.mlp_bias
    patterns = c.layer_patterns or (c.pattern,) * c.n_layers
    windows = {p.size for p in patterns if p.kind == "window"}
    if kind == "mistral":
        keys["sliding_window"] = windows.pop() if windows else None
    elif kind in ("qwen2", "qwen3"):
        if len(windows) > 1:
            raise ModelError(
                f"{kind} has one sliding window size; this model has {sorted(windows)}"
            )
        keys["use_sliding_window"] = bool(windows)
        keys["sliding_window"] = windows.pop() if windows else None
        keys["max_window_layers"] = c.n_layers
        keys["layer_types"] = [
            "sliding_attention" if p.kind == "window" else "full_attention" for p in patterns
        ]
    return keys
