"""The prompts of a TRL-style dataset, tokenized, and the order a run reads
them in.

A dataset is a `datasets.Dataset` (or a list of dicts) with a `prompt`
column: plain text, or a conversation (a list of {"role", "content"}
messages) that the tokenizer's chat template turns into text, with the
generation prompt added, as TRL does. Its other columns go to the reward
functions. The order is a function of (seed, step) only: epoch e is a
permutation drawn from the seed and e, and step k reads the prompts
[k * P, (k + 1) * P) of the epochs laid end to end, so a run resumed at
step k reads what an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import TrainerConfigError


class PromptData:
    def __init__(self, dataset, tokenizer, shuffle: bool, seed: int):
        rows = _rows(dataset)
        if not rows:
            raise TrainerConfigError("train_dataset is empty", "give at least one prompt")
        if "prompt" not in rows[0]:
            raise TrainerConfigError(
                f"train_dataset has no 'prompt' column (it has {sorted(rows[0])})",
                "GRPO reads a 'prompt' column: text, or a list of chat messages",
            )
        self.rows, self.shuffle, self.seed = rows, shuffle, seed
        self.columns = [c for c in rows[0] if c != "prompt"]
        self.conversational = _is_chat(rows[0]["prompt"])
        self.ids = [self._encode(tokenizer, row["prompt"], k) for k, row in enumerate(rows)]

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def prompt_width(self) -> int:
        return max(len(ids) for ids in self.ids)

    def indices(self, step: int, count: int) -> list[int]:
        """The dataset rows of optimizer step `step`, `count` prompts."""
        n = len(self.rows)
        out = []
        for position in range(step * count, (step + 1) * count):
            epoch, k = divmod(position, n)
            out.append(int(self._order(epoch)[k]))
        return out

    def _order(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(len(self.rows))
        return np.random.default_rng([self.seed, epoch]).permutation(len(self.rows))

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


def _rows(dataset) -> list[dict]:
    """The dataset's rows as dicts (a datasets.Dataset or a sequence)."""
    if type(dataset).__name__ == "IterableDataset":
        raise TrainerConfigError(
            "an IterableDataset is not supported yet",
            "materialize it: datasets.Dataset.from_list(list(dataset.take(N)))",
        )
    if hasattr(dataset, "column_names") and hasattr(dataset, "to_list"):
        return dataset.to_list()
    if isinstance(dataset, Sequence) and all(isinstance(r, dict) for r in dataset):
        return list(dataset)
    raise TrainerConfigError(
        f"train_dataset must be a datasets.Dataset or a list of dicts, got {type(dataset).__name__}"
    )


def _is_chat(prompt) -> bool:
    return isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt)
