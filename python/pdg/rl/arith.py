"""A synthetic task with an exact checker: small additions written as
characters ("17+25=" -> "42"), and the character tokenizer they use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class CharTokenizer:
    """Digits, '+' and '=' as ids 0..11; EOS is 12."""

    chars = "0123456789+="

    def __init__(self):
        self.ids = {c: i for i, c in enumerate(self.chars)}
        self.eos = len(self.chars)
        self.vocab = len(self.chars) + 1

    def encode(self, text: str) -> list[int]:
        unknown = set(text) - set(self.ids)
        if unknown:
            raise ValueError(f"characters {sorted(unknown)} are not in the tokenizer")
        return [self.ids[c] for c in text]

    def decode(self, ids) -> str:
        """Characters up to the first EOS."""
        out = []
        # Python ints: a loop over numpy's scalars costs several times more.
        for i in ids.tolist() if isinstance(ids, np.ndarray) else map(int, ids):
            if i == self.eos:
                break
            out.append(self.chars[i] if 0 <= i < self.eos else "?")
        return "".join(out)


@dataclass
class Addition:
    """a + b with a, b in [0, limit)."""

    limit: int = 50
    tokenizer: CharTokenizer = None  # type: ignore[assignment]

    def __post_init__(self):
        self.tokenizer = self.tokenizer or CharTokenizer()

    @property
    def prompt_width(self) -> int:
        return len(f"{self.limit - 1}+{self.limit - 1}=")

    @property
    def answer_width(self) -> int:
        """Answer digits plus EOS."""
        return len(str(2 * (self.limit - 1))) + 1

    def problems(self, rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
        """n (prompt, answer) pairs."""
        a, b = rng.integers(0, self.limit, size=(2, n))
        return [(f"{x}+{y}=", str(x + y)) for x, y in zip(a, b, strict=True)]

    def reward(self, prompt: str, completion: str) -> float:
        """1.0 for the exact sum, else 0.0."""
        x, y = prompt.rstrip("=").split("+")
        return 1.0 if completion == str(int(x) + int(y)) else 0.0

    def supervised(self, problems, length: int):
        """(tokens, targets, loss mask) of the correct completions, each
        (n, length): the mask selects the answer and its EOS as targets."""
        tok = self.tokenizer
        n = len(problems)
        tokens = np.full((n, length), tok.eos, np.int64)
        targets = np.full((n, length), tok.eos, np.int64)
        mask = np.zeros((n, length))
        for k, (prompt, answer) in enumerate(problems):
            seq = tok.encode(prompt) + tok.encode(answer) + [tok.eos]
            seq = seq[: length + 1]
            tokens[k, : len(seq) - 1] = seq[:-1]
            targets[k, : len(seq) - 1] = seq[1:]
            mask[k, len(prompt) - 1 : len(seq) - 1] = 1.0
        return tokens, targets, mask
