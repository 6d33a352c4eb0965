"""LoRA targets by Hugging Face module names (PEFT's `target_modules`).

PEFT names a projection by its module in the checkpoint:
`model.layers.0.self_attn.q_proj`; a target matches a module whose name
is the target or ends with "." + target (`q_proj`, `self_attn.q_proj`),
a string other than "all-linear" is a regular expression the whole name
must match, and "all-linear" is every projection but the output head.
pdg's own Linear paths (`h0.attn.q`, or `attn.q` for every layer) are
accepted too. In GPT-2's checkpoints one module (`attn.c_attn`) holds q,
k and v: targeting it adapts the three projections, each with its own
rank-r adapter (PEFT shares one lora_A between them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pdg.frontend import ProgramError
from pdg.nn.decoder import DecoderConfig
from pdg.nn.lora import LoraSpec

from .errors import ModelError
from .layout import PREFIXES, rules

# PEFT's targets when target_modules is None, by layout.
DEFAULT_TARGETS = {"llama": ("q_proj", "v_proj"), "gpt2": ("c_attn",)}


@dataclass
class LoraConfig:
    """LoRA's settings by PEFT's names, for scripts without peft installed
    (GRPOTrainer(peft_config=...) takes this or a peft.LoraConfig)."""

    r: int = 8
    lora_alpha: float = 8
    target_modules: Sequence[str] | str | None = None
    lora_dropout: float = 0.0
    bias: str = "none"
    use_rslora: bool = False
    modules_to_save: Sequence[str] | None = None
    init_lora_weights: bool = True
    task_type: str | None = "CAUSAL_LM"


def lora_spec(peft_config, config: DecoderConfig, layout: str) -> LoraSpec:
    """The LoraSpec of a PEFT-style config (peft.LoraConfig or LoraConfig
    above) for a model of `config` whose checkpoint has `layout`."""
    get = lambda name, default: getattr(peft_config, name, default)  # noqa: E731
    refused = {
        "lora_dropout": (get("lora_dropout", 0.0) or 0.0) != 0.0,
        "bias": get("bias", "none") != "none",
        "modules_to_save": bool(get("modules_to_save", None)),
        "init_lora_weights": get("init_lora_weights", True) is not True,
        "use_dora": bool(get("use_dora", False)),
        "layers_to_transform": get("layers_to_transform", None) is not None,
    }
    for name, set_ in refused.items():
        if set_:
            raise _error(
                f"LoRA option {name}={get(name, None)!r} is not supported by pdg",
                f"leave {name} at PEFT's default",
            )
    targets = resolve_targets(get("target_modules", None), config, layout)
    try:
        return LoraSpec(get("r", 8), get("lora_alpha", 8), targets, bool(get("use_rslora", False)))
    except ProgramError as e:
        raise ModelError(f"peft_config: {e.message}") from None


def linear_modules(config: DecoderConfig, layout: str) -> dict[str, str]:
    """Every projection of the model: pdg Linear path -> the checkpoint's
    module name (full, with the layout's prefix)."""
    out = {}
    for rule in rules(config, layout):
        path, leaf = rule.path.rsplit(".", 1)
        if leaf != "w" or not rule.name.endswith(".weight") or rule.top:
            continue
        if path.split(".")[-1] in ("wte", "wpe"):  # embeddings are tables, not projections
            continue
        out[path] = PREFIXES[layout] + rule.name.removesuffix(".weight")
    return out


def resolve_targets(target_modules, config: DecoderConfig, layout: str) -> tuple[str, ...]:
    """pdg Linear paths for PEFT's `target_modules` (see the module docs)."""
    modules = linear_modules(config, layout)
    if target_modules is None:
        target_modules = DEFAULT_TARGETS[layout]
    if isinstance(target_modules, str):
        if target_modules == "all-linear":
            return tuple(modules)
        try:
            pattern = re.compile(target_modules)
        except re.error as e:
            raise ModelError(
                f"target_modules {target_modules!r} is not a regular expression: {e}"
            ) from None
        found = tuple(p for p, name in modules.items() if pattern.fullmatch(name))
        if not found:
            raise _error(
                f"target_modules {target_modules!r} matches no projection of the model",
                f"its projections are named like {next(iter(modules.values()))}",
            )
        return found
    chosen: list[str] = []
    for target in target_modules:
        matched = [
            p
            for p, name in modules.items()
            if name == target
            or name.endswith("." + target)
            or p == target
            or p.endswith("." + target)
        ]
        if not matched:
            examples = sorted({name.rsplit(".", 1)[-1] for name in modules.values()})
            raise _error(
                f"LoRA target module {target!r} is not a projection of the model",
                f"its projections: {', '.join(examples)} (or 'all-linear')",
            )
        chosen += [p for p in matched if p not in chosen]
    # In the model's order, not the targets'.
    return tuple(p for p in modules if p in chosen)


ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"


def peft_expressible(spec: LoraSpec, config: DecoderConfig, layout: str) -> bool:
    """Whether PEFT can hold these adapters: each target a module of its
    own (GPT-2's fused c_attn carries three adapters here, one in PEFT)."""
    modules = linear_modules(config, layout)
    names = [modules[t] for t in spec.targets]
    return len(set(names)) == len(names)


def save_adapter(
    directory, spec: LoraSpec, weights, config: DecoderConfig, layout: str, base_model: str
) -> Path:
    """The adapters as PEFT saves them (adapter_config.json and
    adapter_model.safetensors: `PeftModel.from_pretrained(base, directory)`
    loads them onto the base model); `base_model`: its path or name."""
    from safetensors.numpy import save_file

    if not peft_expressible(spec, config, layout):
        raise ModelError(
            "these adapters have no PEFT form (a fused projection, GPT-2's c_attn, "
            "carries one adapter per part)"
        )
    modules = linear_modules(config, layout)
    tensors = {}
    for target in spec.targets:
        key = f"base_model.model.{modules[target]}"
        # pdg's (d_in, r) and (r, d_out) are torch Linear weights transposed.
        tensors[f"{key}.lora_A.weight"] = np.ascontiguousarray(weights[f"{target}.lora_a"].T)
        tensors[f"{key}.lora_B.weight"] = np.ascontiguousarray(weights[f"{target}.lora_b"].T)
    settings = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_model,
        "r": spec.rank,
        "lora_alpha": spec.alpha,
        "use_rslora": spec.rslora,
        # Full module names: PEFT adapts exactly these.
        "target_modules": sorted(modules[t] for t in spec.targets),
        "lora_dropout": 0.0,
        "bias": "none",
        "fan_in_fan_out": layout == "gpt2",  # GPT-2's Conv1D holds (d_in, d_out)
        "inference_mode": True,
        "init_lora_weights": True,
        "modules_to_save": None,
    }
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(directory / ADAPTER_WEIGHTS))
    (directory / ADAPTER_CONFIG).write_text(json.dumps(settings, indent=2) + "\n")
    return directory


def _error(message: str, hint: str) -> ModelError:
    return ModelError(f"{message} (hint: {hint})")
