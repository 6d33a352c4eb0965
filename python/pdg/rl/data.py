"""The prompts of a TRL-style dataset, tokenized, and the order a run reads
them in.

A dataset is a `datasets.Dataset` (or a list of dicts) or a streamed
`datasets.IterableDataset` with a `prompt` column: plain text, or a
conversation (a list of {"role", "content"} messages) that the
tokenizer's chat template turns into text, with the generation prompt
added, as TRL does. Its other columns go to the reward functions. The
order is a function of (seed, step) only (rows.py), so a run resumed at
step k reads what an uninterrupted one would.
"""

from __future__ import annotations

from .errors import TrainerConfigError
from .rows import KeyedIds, RowStream, row_source


class PromptData:
    """The prompts of a dataset; `width`: the longest prompt (tokens) a
    streamed dataset may hold (a materialized one's is its longest)."""

    def __init__(self, dataset, tokenizer, shuffle: bool, seed: int, width: int | None = None):
        self.tokenizer = tokenizer
        self.source = row_source(dataset, shuffle, seed, self._first)
        self.rows = self.source.rows
        self.streamed = isinstance(self.source, RowStream)
        self.width = width if self.streamed else None
        if self.streamed:
            self.ids = KeyedIds(self.source, self._encode_row)
        else:
            self.ids = [self._encode_row(k, row) for k, row in enumerate(self.rows)]
            self.width = max(len(ids) for ids in self.ids)

    def _first(self, row: dict) -> None:
        """Checks a dataset's first row, and learns its columns and kind."""
        if "prompt" not in row:
            raise TrainerConfigError(
                f"train_dataset has no 'prompt' column (it has {sorted(row)})",
                "GRPO reads a 'prompt' column: text, or a list of chat messages",
            )
        self.columns = [c for c in row if c != "prompt"]
        self.conversational = _is_chat(row["prompt"])

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def size(self) -> int | None:
        """The dataset's rows; None when streamed."""
        return None if self.streamed else len(self.rows)

    @property
    def prompt_width(self) -> int:
        return self.width

    def indices(self, step: int, count: int) -> list[int]:
        """The dataset rows of optimizer step `step`, `count` prompts."""
        return self.source.indices(step, count)

    def read(self, steps, count: int) -> list[list[int]]:
        """The rows of the steps of one call, `count` per step (for a
        stream, positions in it, in `rows` and `ids` until the next read)."""
        return self.source.read(steps, count)

    def epoch_at(self, step: int, count: int) -> float:
        return self.source.epoch_at(step, count)

    def _encode_row(self, k: int, row: dict) -> list[int]:
        ids = self._encode(self.tokenizer, row["prompt"], k)
        if self.width is not None and len(ids) > self.width:
            raise TrainerConfigError(
                f"train_dataset row {k}: the prompt has {len(ids)} tokens; a streamed "
                f"dataset's prompts may have up to {self.width}",
                "raise pdg_prompt_width (or max_completion_length leaves the model's context "
                "too little room)",
            )
        return ids

    def _encode(self, tokenizer, prompt, row: int) -> list[int]:
        if self.conversational != _is_chat(prompt):
            raise TrainerConfigError(
                f"train_dataset row {row}: the 'prompt' column mixes text and chat messages",
                "make every prompt a string, or every prompt a list of messages",
            )
        if self.conversational:
            if not hasattr(tokenizer, "apply_chat_template"):
                raise TrainerConfigError(
                    "the prompts are chat messages but the tokenizer has no chat template",
                    "load the model from a directory whose tokenizer has one",
                )
            text = tokenizer.apply_chat_template(prompt, add_generation_prompt=True)
            # The template writes the special tokens (BOS) itself.
            ids = tokenizer.encode(text, add_special_tokens=False)
        elif isinstance(prompt, str):
            ids = tokenizer.encode(prompt)
        else:
            raise TrainerConfigError(
                f"train_dataset row {row}: 'prompt' is a {type(prompt).__name__}",
                "a prompt is a string or a list of {'role': ..., 'content': ...} messages",
            )
        if not ids:
            raise TrainerConfigError(f"train_dataset row {row}: the prompt has no tokens")
        return list(ids)


def _is_chat(prompt) -> bool:
    return isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt)
