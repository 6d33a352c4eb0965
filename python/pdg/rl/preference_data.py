"""The preference pairs of a TRL-style DPO dataset, tokenized as TRL's
DPOTrainer tokenizes them, and laid out as the DPO update's sequences.

A row has `prompt`, `chosen` and `rejected`: text, or chat messages (the
prompt a list of messages, each completion the assistant's messages).
Text: the prompt is tokenized with the tokenizer's special tokens, prompt
+ completion together, the completion being the tokens after the prompt's,
ended with EOS (added when the text does not end on it). Messages: the
chat template renders the prompt with the generation prompt, and the
prompt followed by the completion. Either way the completion is what
follows the prompt's length (a tokenizer that merges the prompt's end
with the completion's start gets TRL's warning, and the same cut). Then
max_prompt_length keeps the prompt's last tokens, and max_length keeps
the first tokens of prompt + completion (TRL's "keep_start"); a pair
whose prompt alone fills max_length is dropped, as TRL drops it. The
order is rows.py's.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np

from .errors import TrainerConfigError
from .rows import KeyedIds, RowStream, row_source

COLUMNS = ("prompt", "chosen", "rejected")


class PreferenceData:
    def __init__(self, dataset, tokenizer, eos: int, args, context: int):
        """`args`: a DPOConfig (max_length, max_prompt_length, shuffle,
        seed); `context`: the model's positions."""
        self.tok, self.eos, self.args = tokenizer, eos, args
        self.warned: set[int] = set()
        self.source = row_source(
            dataset, args.shuffle_dataset, args.seed, self._first, keep=self._keeps
        )
        self.rows = self.source.rows
        self.streamed = isinstance(self.source, RowStream)
        if self.streamed:
            # Compiled before the pairs are read: as long as max_length allows.
            limit = args.max_length if args.max_length is not None else context + 1
            self.positions = min(limit, context + 1) - 1
            self.pairs = KeyedIds(self.source, self._encode_fitting)
        else:
            self.pairs = [self._encode(k, row) for k, row in enumerate(self.rows)]
            self.positions = max(len(p) + max(len(c), len(r)) for p, c, r in self.pairs) - 1
            if self.positions > context:
                raise TrainerConfigError(
                    f"the longest prompt + completion has {self.positions + 1} tokens; the "
                    f"model reads {context + 1} at most",
                    "set DPOConfig's max_length (or max_prompt_length)",
                )
        self.context = context

    @property
    def size(self) -> int | None:
        return None if self.streamed else len(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def indices(self, step: int, count: int) -> list[int]:
        return self.source.indices(step, count)

    def read(self, steps, count: int) -> list[list[int]]:
        return self.source.read(steps, count)

    def epoch_at(self, step: int, count: int) -> float:
        return self.source.epoch_at(step, count)

    def sequences(self, steps: list[list[int]], real) -> dict[str, np.ndarray]:
        """The update's `tokens`, `targets` and `mask` over [p, i, g, t]:
        pair p of step i (rows steps[i]), g = 0 its chosen and 1 its
        rejected completion; the mask covers the completion's tokens."""
        shape = (len(steps[0]), len(steps), 2, self.positions)
        tokens = np.full(shape, self.eos, np.int64)
        targets = np.full(shape, self.eos, np.int64)
        mask = np.zeros(shape, real)
        for i, rows in enumerate(steps):
            for p, row in enumerate(rows):
                prompt, *completions = self.pairs[row]
                for g, completion in enumerate(completions):
                    seq = prompt + completion
                    n = len(seq) - 1  # positions fed to the model
                    tokens[p, i, g, :n] = seq[:-1]
                    targets[p, i, g, :n] = seq[1:]
                    mask[p, i, g, len(prompt) - 1 : n] = 1.0
        return {"tokens": tokens, "targets": targets, "mask": mask}

    # --- reading rows ------------------------------------------------------

    def _first(self, row: dict) -> None:
        missing = [c for c in COLUMNS if c not in row]
        if missing:
            raise TrainerConfigError(
                f"train_dataset has no {', '.join(repr(c) for c in missing)} column "
                f"(it has {sorted(row)})",
                "DPO reads 'prompt', 'chosen' and 'rejected': text, or chat messages",
            )
        self.conversational = _is_chat(row["prompt"])

    def _keeps(self, k: int, row: dict) -> bool:
        """TRL drops a pair whose prompt alone fills max_length."""
        prompt = self._encode(k, row)[0]
        return self.args.max_length is None or len(prompt) < self.args.max_length

    def _encode_fitting(self, k: int, row: dict) -> tuple[list[int], list[int], list[int]]:
        pair = self._encode(k, row)
        prompt, chosen, rejected = pair
        if len(prompt) + max(len(chosen), len(rejected)) - 1 > self.positions:
            raise TrainerConfigError(
                f"train_dataset row {k}: prompt + completion has "
                f"{len(prompt) + max(len(chosen), len(rejected))} tokens; the model reads "
                f"{self.positions + 1} at most",
                "set DPOConfig's max_length",
            )
        return pair

    def _encode(self, k: int, row: dict) -> tuple[list[int], list[int], list[int]]:
        """(prompt, chosen, rejected) token ids, truncated (see the module's
        docstring)."""
        chat = _is_chat(row["prompt"])
        if chat != self.conversational:
            raise TrainerConfigError(
                f"train_dataset row {k}: the 'prompt' column mixes text and chat messages",
                "make every row text, or every row chat messages",
            )
        for column in ("chosen", "rejected"):
            kind = _is_chat(row[column]) if chat else isinstance(row[column], str)
            if not kind:
                raise TrainerConfigError(
                    f"train_dataset row {k}: '{column}' is a {type(row[column]).__name__}",
                    "with chat prompts, a completion is a list of messages; with text "
                    "prompts, text",
                )
        if chat:
            prompt = self._chat(row["prompt"], True)
            completions = [
                self._chat(row["prompt"] + row[c], False) for c in ("chosen", "rejected")
            ]
        else:
            if not isinstance(row["prompt"], str):
                raise TrainerConfigError(
                    f"train_dataset row {k}: 'prompt' is a {type(row['prompt']).__name__}",
                    "a prompt is text or a list of {'role': ..., 'content': ...} messages",
                )
            prompt = _encode_text(self.tok, row["prompt"])
            completions = [
                _encode_text(self.tok, row["prompt"] + row[c]) for c in ("chosen", "rejected")
            ]
        if not prompt:
            raise TrainerConfigError(f"train_dataset row {k}: the prompt has no tokens")
        pair = []
        for whole in completions:
            if whole[: len(prompt)] != prompt and k not in self.warned:
                # TRL warns and goes on, cutting at the prompt's length.
                self.warned.add(k)
                print(
                    f"pdg: train_dataset row {k}: the prompt's tokens are not the start of "
                    "prompt + completion's (the tokenizer merges the prompt's end with the "
                    "completion's start); the completion is what follows the prompt's length",
                    file=sys.stderr,
                )
            completion = list(whole[len(prompt) :])
            if not chat and (not completion or completion[-1] != self.eos):
                completion.append(self.eos)
            pair.append(completion)
        if self.args.max_prompt_length is not None:
            prompt = prompt[-self.args.max_prompt_length :]
        if self.args.max_length is not None:
            room = self.args.max_length - len(prompt)
            pair = [c[:room] for c in pair]
        return list(prompt), pair[0], pair[1]

    def _chat(self, messages, generation_prompt: bool) -> list[int]:
        if not hasattr(self.tok, "apply_chat_template"):
            raise TrainerConfigError(
                "the pairs are chat messages but the tokenizer has no chat template",
                "load the model from a directory whose tokenizer has one",
            )
        text = self.tok.apply_chat_template(messages, add_generation_prompt=generation_prompt)
        return _encode_text(self.tok, text, special=False)  # the template wrote them


def _encode_text(tokenizer, text: str, special: bool = True) -> list[int]:
    if "add_special_tokens" in inspect.signature(tokenizer.encode).parameters:
        return list(tokenizer.encode(text, add_special_tokens=special))
    return list(tokenizer.encode(text))


def _is_chat(value) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) for m in value)
