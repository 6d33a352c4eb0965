"""A Hugging Face model directory in and out of pdg.

model = load("Llama-3.2-1B")          # config.json, safetensors, tokenizer.json
model.config                          # a pdg.nn.DecoderConfig
model.weights                         # float32 arrays by pdg parameter path
model.tokenizer.encode("Hello")       # None when the directory has no tokenizer.json
model.eos                             # end-of-sequence ids (generation_config, config, tokenizer)
save("out", trained_weights, model)   # a directory transformers loads with the same logits
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pdg.nn.decoder import DecoderConfig

from .config import LAYOUTS, decoder_config, hf_config, model_type
from .errors import ModelError
from .layout import to_hf
from .tokenizer import TOKENIZER, Tokenizer
from .weights import read_weights, write_weights

CONFIG = "config.json"
GENERATION_CONFIG = "generation_config.json"
# The tokenizer's files, copied with an exported model.
TOKENIZER_FILES = (
    TOKENIZER,
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
)


@dataclass
class Model:
    directory: Path
    config: DecoderConfig
    hf_config: dict  # config.json as read
    weights: dict[str, np.ndarray]
    tokenizer: Tokenizer | None
    eos: tuple[int, ...]  # every id that ends a sequence

    @property
    def model_type(self) -> str:
        return self.hf_config["model_type"]

    def save(self, directory, weights: Mapping[str, np.ndarray] | None = None, **options) -> Path:
        """This model (with `weights`, e.g. trained ones) as a Hugging Face
        directory; see save()."""
        return save(directory, self.weights if weights is None else weights, self, **options)


def load(directory, *, weights: bool = True, tokenizer: bool = True) -> Model:
    """Reads a Hugging Face checkpoint directory. `weights=False` reads the
    configuration only (model.weights is then empty); the tokenizer is read
    when tokenizer.json is there (model.tokenizer is None otherwise)."""
    directory = Path(directory)
    if not directory.is_dir():
        what = "does not exist" if not directory.exists() else "is not a directory"
        raise ModelError(
            f"{directory} {what}; give a Hugging Face model directory (config.json, ...)"
        )
    hf = read_config(directory / CONFIG)
    config = decoder_config(hf, directory / CONFIG)
    kind = model_type(hf, directory / CONFIG)
    arrays = read_weights(directory, config, LAYOUTS[kind]) if weights else {}
    eos = eos_ids(directory, hf)
    tok = None
    if tokenizer and (directory / TOKENIZER).is_file():
        tok = Tokenizer(directory, eos)
        if not eos:
            eos = tok.eos_ids
    for i in eos:
        if not 0 <= i < config.vocab:
            raise ModelError(
                f"{directory}: the end-of-sequence id {i} is outside the vocabulary "
                f"(0..{config.vocab - 1})"
            )
    return Model(directory, config, hf, arrays, tok, tuple(eos))


def read_config(path: Path) -> dict:
    if not path.is_file():
        raise ModelError(f"{path.parent}: no {path.name} (a Hugging Face model directory has one)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ModelError(f"cannot read {path}: {e.strerror}") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def eos_ids(directory: Path, hf: dict) -> tuple[int, ...]:
    """The ids that end generation: generation_config.json's eos_token_id
    (what transformers' generate() stops on), else config.json's; an int
    or a list of ints. Empty when neither says (the tokenizer's EOS is
    used then)."""
    sources = []
    generation = directory / GENERATION_CONFIG
    if generation.is_file():
        sources.append((generation, read_config(generation)))
    sources.append((directory / CONFIG, hf))
    for path, data in sources:
        value = data.get("eos_token_id")
        if value is None:
            continue
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise ModelError(
                f"{path}: 'eos_token_id' must be an integer or a list of them, got {value!r}"
            )
        return tuple(values)
    return ()


def save(
    directory,
    weights: Mapping[str, np.ndarray],
    model: Model | DecoderConfig,
    *,
    max_shard_bytes: int | None = None,
) -> Path:
    """Writes a Hugging Face directory that transformers'
    AutoModelForCausalLM.from_pretrained loads: config.json (the source
    model's, with float32 weights; or one made for a DecoderConfig),
    model.safetensors (or shards of at most `max_shard_bytes`), and the
    source model's tokenizer and generation config. `weights` are pdg's,
    by path. The directory must be new or empty."""
    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ModelError(f"{directory} exists and is not an empty directory; save into a new one")
    source = model if isinstance(model, Model) else None
    config = model.config if source else model
    if not isinstance(config, DecoderConfig):
        raise ModelError(
            f"save() takes a loaded Model or a DecoderConfig, got {type(model).__name__}"
        )
    hf = hf_config(config, source.hf_config if source else None)
    tensors = to_hf(
        {k: np.asarray(v, np.float32) for k, v in weights.items()},
        config,
        LAYOUTS[hf["model_type"]],
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CONFIG).write_text(json.dumps(hf, indent=2, sort_keys=True) + "\n")
    write_weights(directory, tensors, max_shard_bytes)
    if source is not None:
        for name in (*TOKENIZER_FILES, GENERATION_CONFIG):
            if (source.directory / name).is_file():
                shutil.copyfile(source.directory / name, directory / name)
    return directory
