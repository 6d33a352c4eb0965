"""The order a TRL-style run reads its dataset's rows in, a function of
(seed, step) only, so that a run resumed at step k reads what the
uninterrupted run read: RowOrder over a materialized dataset (a
datasets.Dataset or a list of dicts), RowStream over a streamed one (a
datasets.IterableDataset). The prompts (data.py) and the preference
pairs (preference_data.py) are read through them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import TrainerConfigError


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
