"""A checkpoint's tokenizer: `tokenizer.json` through the `tokenizers`
library, its special tokens and chat template from `tokenizer_config.json`
(or `chat_template.jinja`, which transformers prefers when both exist).

The interface is the one pdg's trainers take (`encode`, `decode`, `eos`),
so a loaded model's tokenizer drops in where rl.CharTokenizer was.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .chat import ChatTemplate
from .errors import ModelError

TOKENIZER = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
CHAT_TEMPLATE = "chat_template.jinja"
# transformers' named special tokens (tokenizer_config.json keys).
SPECIAL = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)


class Tokenizer:
    def __init__(self, directory: Path, eos: Sequence[int] = ()):
        from .weights import require

        directory = Path(directory)
        path = directory / TOKENIZER
        if not path.is_file():
            raise ModelError(f"{directory}: no {TOKENIZER} (the model's tokenizer)")
        tokenizers = require("tokenizers")
        try:
            self.backend = tokenizers.Tokenizer.from_file(str(path))
        except Exception as e:  # the library's own parse error
            raise ModelError(
                f"{path}: not a tokenizer the tokenizers library reads ({e})"
            ) from None
        self.path = path
        self.config = _read_config(directory / TOKENIZER_CONFIG)
        self.special_tokens = self._special_tokens(directory / TOKENIZER_CONFIG)
        ids = [int(i) for i in eos]
        if not ids and "eos_token" in self.special_tokens:
            token = self.backend.token_to_id(self.special_tokens["eos_token"])
            ids = [token] if token is not None else []
        self.eos_ids = tuple(ids)
        # Compiled on first use: a model whose template jinja2 cannot read
        # (or without jinja2) still encodes and generates.
        self._template_source = _chat_template_source(directory, self.config)
        self._template: ChatTemplate | None = None

    @property
    def eos(self) -> int | None:
        """The first end-of-sequence id (what a completion is padded with)."""
        return self.eos_ids[0] if self.eos_ids else None

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of `text`, with the tokenizer's special tokens around
        them (e.g. Llama's BOS) unless add_special_tokens=False."""
        if not isinstance(text, str):
            raise TypeError(f"encode() takes a str, got {type(text).__name__}")
        return self.backend.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """The text of `ids` (special tokens such as EOS left out by default)."""
        return self.backend.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)

    def apply_chat_template(
        self, messages: list[dict], add_generation_prompt: bool = False, **variables
    ) -> str:
        """The text of a conversation as the model was trained to see it,
        rendered from the chat template as transformers renders it."""
        if self._template_source is None:
            raise ModelError(
                f"{self.path.parent}: no chat template (neither {CHAT_TEMPLATE} nor a "
                f"'chat_template' in {TOKENIZER_CONFIG})"
            )
        if self._template is None:
            self._template = ChatTemplate(*self._template_source)
        return self._template.render(
            messages,
            add_generation_prompt=add_generation_prompt,
            **{**self.special_tokens, **variables},
        )

    def _special_tokens(self, file: Path) -> dict[str, str]:
        """The named special tokens the chat template sees (bos_token, ...,
        and a model's own `*_token` keys), as strings."""
        out = {}
        for key, value in self.config.items():
            if key in ("extra_special_tokens", "additional_special_tokens"):
                continue
            if key not in SPECIAL and not key.endswith("_token"):
                continue
            if isinstance(value, dict):  # a serialized AddedToken
                value = value.get("content")
            if isinstance(value, str):
                out[key] = value
            elif value is not None and key in SPECIAL:
                raise ModelError(
                    f"{file}: '{key}' must be a string or an AddedToken, got {value!r}"
                )
        return out


def _read_config(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ModelError(f"{path}: not readable JSON ({e})") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _chat_template_source(directory: Path, config: dict) -> tuple[str, str] | None:
    """(the template, where it is from): chat_template.jinja if present,
    else tokenizer_config.json's 'chat_template' (a string, or a list of
    named templates: 'default')."""
    file = directory / CHAT_TEMPLATE
    if file.is_file():
        try:
            return file.read_text(encoding="utf-8"), str(file)
        except (OSError, UnicodeDecodeError) as e:
            raise ModelError(f"cannot read {file}: {e}") from None
    template = config.get("chat_template")
    where = f"{directory / TOKENIZER_CONFIG}: 'chat_template'"
    if template is None:
        return None
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        if "default" not in named:
            raise ModelError(
                f"{where} lists templates {sorted(map(str, named))} but none named 'default'"
            )
        template = named["default"]
    if not isinstance(template, str):
        raise ModelError(f"{where} must be a string, got {type(template).__name__}")
    return template, where
