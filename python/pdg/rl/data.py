"""The prompts of a TRL-style dataset, tokenized, and the order a run reads
them in.

A dataset is a `datasets.Dataset` (or a list of dicts) or a streamed
`datasets.IterableDataset` with a `prompt` column: plain text, or a
conversation (a list of {"role", "content"} messages) that the
tokenizer's chat template turns into text, with the generation prompt
added, as TRL does. Its other columns go to the reward functions. The
order is a function of (seed, step) only (RowOrder, RowStream), so a run
resumed at step k reads what an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import TrainerConfigError


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


def row_source(dataset, shuffle: bool, seed: int, check_first, keep=None):
    """The rows of `dataset` in the order a run reads them: a RowOrder
    over a datasets.Dataset (or a list of dicts), a RowStream over a
    datasets.IterableDataset. `check_first(row)` sees the first row;
    `keep(k, row)`, when given, says which rows to read (the others are
    dropped, as TRL's dataset.filter drops them)."""
    if type(dataset).__name__ == "IterableDataset":
        return RowStream(dataset, shuffle, seed, check_first, keep)
    if hasattr(dataset, "column_names") and hasattr(dataset, "to_list"):
        rows = dataset.to_list()
    elif isinstance(dataset, Sequence) and all(isinstance(r, dict) for r in dataset):
        rows = list(dataset)
    else:
        raise TrainerConfigError(
            "train_dataset must be a datasets.Dataset, a datasets.IterableDataset or a list of "
            f"dicts, got {type(dataset).__name__}"
        )
    if not rows:
        raise TrainerConfigError("train_dataset is empty", "give at least one row")
    check_first(rows[0])
    if keep is not None:
        rows = [row for k, row in enumerate(rows) if keep(k, row)]
        if not rows:
            raise TrainerConfigError("train_dataset has no row to train on (all were dropped)")
    return RowOrder(rows, shuffle, seed)


class RowOrder:
    """A materialized dataset's order: epoch e is a permutation drawn from
    (seed, e), and step k reads rows [k * count, (k + 1) * count) of the
    epochs laid end to end."""

    def __init__(self, rows: list[dict], shuffle: bool, seed: int):
        self.rows, self.shuffle, self.seed = rows, shuffle, seed

    def indices(self, step: int, count: int) -> list[int]:
        n = len(self.rows)
        out = []
        for position in range(step * count, (step + 1) * count):
            epoch, k = divmod(position, n)
            out.append(int(self._order(epoch)[k]))
        return out

    def read(self, steps, count: int) -> list[list[int]]:
        return [self.indices(s, count) for s in steps]

    def epoch_at(self, step: int, count: int) -> float:
        """The epochs done after step `step` (as transformers logs `epoch`)."""
        return (step + 1) * count / len(self.rows)

    def _order(self, epoch: int) -> np.ndarray:
        if not self.shuffle:
            return np.arange(len(self.rows))
        return np.random.default_rng([self.seed, epoch]).permutation(len(self.rows))


class RowStream:
    """A streamed dataset (datasets.IterableDataset) read in order, as
    TRL reads one: shuffled by the dataset's buffer shuffle with the seed
    (dataset.shuffle(seed=seed)), epoch e after set_epoch(e) (which
    reseeds the shuffle), the epochs end to end. Step k reads the stream's
    rows [k * count, (k + 1) * count): `rows` maps each position read to
    its row (only those of the last read(), a call's steps, are kept). A run resumed at step k reads
    the stream again from its start and skips the rows before, so it reads
    what an uninterrupted run read."""

    def __init__(self, dataset, shuffle: bool, seed: int, check_first, keep=None):
        self.dataset = dataset.shuffle(seed=seed) if shuffle else dataset
        self.keep, self.checked = keep, False
        self.rows: dict[int, dict] = {}
        self.epochs: dict[int, int] = {}  # position -> the epoch it was read in
        self._restart()
        self.check_first = check_first
        if self._read() is None:
            raise TrainerConfigError("train_dataset is empty", "give at least one row")
        self._restart()

    def _restart(self) -> None:
        self.epoch, self.position, self.iterator = 0, 0, None
        self.epoch_start = 0

    def _read(self) -> dict | None:
        """The next row of the stream (None: an empty dataset)."""
        while True:
            if self.iterator is None:
                if hasattr(self.dataset, "set_epoch"):
                    self.dataset.set_epoch(self.epoch)
                self.iterator = iter(self.dataset)
            try:
                row = dict(next(self.iterator))
            except StopIteration:
                if self.position == self.epoch_start:
                    return None  # an empty stream, or every row dropped
                self.epoch, self.iterator, self.epoch_start = self.epoch + 1, None, self.position
                continue
            if not self.checked:
                self.check_first(row)
                self.checked = True
            if self.keep is not None and not self.keep(self.position, row):
                continue
            self.position += 1
            return row

    def indices(self, step: int, count: int) -> list[int]:
        start = step * count
        if start < self.position:
            self._restart()
        while self.position < start:  # resuming: the rows earlier steps read
            self._read()
        out = []
        for _ in range(count):
            row = self._read()
            if row is None:
                raise TrainerConfigError("train_dataset is empty", "give at least one row")
            self.rows[self.position - 1] = row
            self.epochs[self.position - 1] = self.epoch
            out.append(self.position - 1)
        return out

    def read(self, steps, count: int) -> list[list[int]]:
        """The rows of a call's steps; the rows of the call before are let go."""
        self.rows.clear()
        self.epochs.clear()
        return [self.indices(s, count) for s in steps]

    def epoch_at(self, step: int, count: int) -> float:
        """The epoch the step's last row was read in (a stream's length is
        not known, so not a fraction)."""
        return float(self.epochs.get((step + 1) * count - 1, self.epoch))


class KeyedIds:
    """The token ids of a stream's rows, by position, encoded when first
    asked for (the stream keeps only the current step's rows)."""

    def __init__(self, source: RowStream, encode):
        self.source, self.encode = source, encode
        self.held: dict[int, list[int]] = {}

    def __getitem__(self, position: int) -> list[int]:
        if position not in self.held:
            if len(self.held) > len(self.source.rows):  # let the calls before go
                self.held = {k: v for k, v in self.held.items() if k in self.source.rows}
            self.held[position] = self.encode(position, self.source.rows[position])
        return self.held[position]


def _is_chat(prompt) -> bool:
    return isinstance(prompt, list) and all(isinstance(m, dict) for m in prompt)
