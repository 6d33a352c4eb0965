"""GSM8K-style word problems, generated: short stories over whole numbers
whose answers take one to three steps of arithmetic, with a worked
solution in GSM8K's format ('3*4=12. 12+5=17. #### 17').

Each problem comes from a template (its steps), the numbers drawn for
it, and its cast: a person, a friend and an object. A hash of a part of
that sends each problem to "train" or "held_out" for good, whatever seeds
the two sides are drawn with, so no held-out problem's text is ever a
training problem's. Which part (`split_by`) says what held-out accuracy
measures:

    "numbers"  (template, numbers): held-out problems ask for combinations
               of numbers the training problems never show in that
               template (each step's arithmetic may appear in others);
               a small model that memorizes combinations fails them.
    "story"    (person, friend, object): held-out problems tell of casts
               never seen in training (each name and object is seen,
               not together), over the same arithmetic: reading a new
               story, not new sums.

The same (split, count, seed) gives the same problems.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SPLITS = ("train", "held_out")
SPLIT_BY = ("numbers", "story")

# (name, subject pronoun); friends are drawn from the same list.
NAMES = (
    ("Ann", "She"),
    ("Ben", "He"),
    ("Cara", "She"),
    ("Dan", "He"),
    ("Eva", "She"),
    ("Finn", "He"),
    ("Gia", "She"),
    ("Hugo", "He"),
)
# (singular, plural)
ITEMS = (
    ("apple", "apples"),
    ("pencil", "pencils"),
    ("sticker", "stickers"),
    ("marble", "marbles"),
    ("cookie", "cookies"),
    ("book", "books"),
    ("shell", "shells"),
    ("card", "cards"),
)


@dataclass(frozen=True)
class Problem:
    template: str
    numbers: tuple[int, ...]
    cast: tuple[str, str, str]  # (person, friend or "" if not named, objects)
    question: str
    solution: str  # the worked steps, ending '#### answer'
    answer: int


class _Draw:
    """The numbers of one problem: `n()` in [2, limit], `small()` in [2, 9]."""

    def __init__(self, rng: np.random.Generator, limit: int):
        self.rng, self.limit = rng, limit

    def n(self) -> int:
        return int(self.rng.integers(2, self.limit + 1))

    def small(self) -> int:
        return int(self.rng.integers(2, 10))


@dataclass(frozen=True)
class _Template:
    name: str
    draw: Callable[[_Draw], tuple[int, ...]]
    # {0}, {1}, ...: the numbers; {name}, {He}, {friend}, {item}, {items}: the words.
    text: str
    # The steps as (expression, value), each value from the ones before.
    steps: Callable[..., list[tuple[str, int]]]


def _change(d: _Draw) -> tuple[int, ...]:
    price, count = d.small(), d.small()
    return price, count, price * count + d.n()


def _gain_loss(d: _Draw) -> tuple[int, ...]:
    a, b = d.n(), d.n()
    return a, b, int(d.rng.integers(1, a + b))


def _loss(d: _Draw) -> tuple[int, ...]:
    given = d.n()
    return given + d.n(), given


def _share(d: _Draw) -> tuple[int, ...]:
    each, friends = d.n(), d.small()
    return each * friends, friends


TEMPLATES = (
    _Template(
        "gain",
        lambda d: (d.n(), d.n()),
        "{name} has {0} {items}. {He} buys {1} more. How many {items} does {name} have now?",
        lambda a, b: [(f"{a}+{b}", a + b)],
    ),
    _Template(
        "loss",
        _loss,
        "{name} had {0} {items} and gave {1} of them to {friend}. "
        "How many {items} does {name} have left?",
        lambda a, b: [(f"{a}-{b}", a - b)],
    ),
    _Template(
        "groups",
        lambda d: (d.small(), d.n()),
        "{name} buys {0} bags with {1} {items} in each bag. How many {items} does {name} buy?",
        lambda a, b: [(f"{a}*{b}", a * b)],
    ),
    _Template(
        "share",
        _share,
        "{name} shares {0} {items} equally among {1} friends. "
        "How many {items} does each friend get?",
        lambda a, b: [(f"{a}/{b}", a // b)],
    ),
    _Template(
        "gain_loss",
        _gain_loss,
        "{name} has {0} {items}. {He} buys {1} more and then gives {2} to {friend}. "
        "How many {items} does {name} have now?",
        lambda a, b, c: [(f"{a}+{b}", a + b), (f"{a + b}-{c}", a + b - c)],
    ),
    _Template(
        "groups_extra",
        lambda d: (d.small(), d.n(), d.n()),
        "{name} buys {0} boxes with {1} {items} in each box and finds {2} more. "
        "How many {items} does {name} have?",
        lambda a, b, c: [(f"{a}*{b}", a * b), (f"{a * b}+{c}", a * b + c)],
    ),
    _Template(
        "change",
        _change,
        "One {item} costs {0} dollars. {name} buys {1} of them and pays with {2} dollars. "
        "How many dollars of change does {name} get?",
        lambda p, k, paid: [(f"{p}*{k}", p * k), (f"{paid}-{p * k}", paid - p * k)],
    ),
    _Template(
        "times_as_many",
        lambda d: (d.n(), d.small()),
        "{name} has {0} {items}. {friend} has {1} times as many {items} as {name}. "
        "How many {items} do they have together?",
        lambda a, k: [(f"{a}*{k}", a * k), (f"{a}+{a * k}", a + a * k)],
    ),
)


class WordProblems:
    def __init__(
        self,
        limit: int = 20,
        held_out_every: int = 8,
        templates: tuple[str, ...] | None = None,
        split_by: str = "numbers",
    ):
        """`limit`: the largest number drawn (most are in [2, limit], counts
        of groups in [2, 9]); about one key in `held_out_every` is held
        out, the key being `split_by`'s (see the module); `templates`: the
        names of the templates to draw from (default all, see TEMPLATES)."""
        if split_by not in SPLIT_BY:
            raise ValueError(f"split_by must be one of {SPLIT_BY}, got {split_by!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 4:
            raise ValueError(f"limit must be an integer of at least 4, got {limit!r}")
        if isinstance(held_out_every, bool) or not isinstance(held_out_every, int):
            raise ValueError(f"held_out_every must be an integer, got {held_out_every!r}")
        if held_out_every < 2:
            raise ValueError(f"held_out_every must be at least 2, got {held_out_every}")
        known = {t.name: t for t in TEMPLATES}
        names = tuple(templates) if templates is not None else tuple(known)
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise ValueError(
                f"unknown templates {unknown}; choose from {', '.join(known)}"
                if unknown
                else "give at least one template"
            )
        self.limit, self.held_out_every, self.split_by = limit, held_out_every, split_by
        self.templates = tuple(known[n] for n in names)

    def split_of(self, problem: Problem) -> str:
        """The split `problem` belongs to, for good."""
        if self.split_by == "numbers":
            key = f"{problem.template}:{','.join(map(str, problem.numbers))}"
        else:
            key = "story:" + ",".join(problem.cast)
        value = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
        return "held_out" if value % self.held_out_every == 0 else "train"

    def problems(self, split: str, count: int, seed: int = 0, unique: bool = False):
        """`count` problems of `split` ("train" or "held_out"), drawn from
        `seed`; `unique`: no question twice (for an evaluation set)."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        rng = np.random.default_rng([seed, SPLITS.index(split)])
        out: list[Problem] = []
        seen: set[tuple] = set()
        draws, budget = 0, 50 * count + 10_000
        while len(out) < count:
            draws += 1
            if draws > budget:
                raise ValueError(
                    f"could not draw {count} {'distinct ' if unique else ''}{split} problems "
                    f"(limit={self.limit}); ask for fewer or raise the limit"
                )
            template = self.templates[int(rng.integers(len(self.templates)))]
            numbers = template.draw(_Draw(rng, self.limit))
            problem = self._write(template, numbers, rng)
            if self.split_of(problem) != split:
                continue
            if unique and problem.question in seen:
                continue
            seen.add(problem.question)
            out.append(problem)
        return out

    @staticmethod
    def _write(template: _Template, numbers: tuple[int, ...], rng) -> Problem:
        person, friend = rng.choice(len(NAMES), size=2, replace=False)
        item, items = ITEMS[int(rng.integers(len(ITEMS)))]
        question = template.text.format(
            *numbers,
            name=NAMES[person][0],
            He=NAMES[person][1],
            friend=NAMES[friend][0],
            item=item,
            items=items,
        )
        steps = template.steps(*numbers)
        answer = steps[-1][1]
        solution = " ".join(f"{expr}={value}." for expr, value in steps) + f" #### {answer}"
        # Only the words the story shows: a friend it never names is no part
        # of it (so two problems of one text always share a split).
        shown = NAMES[friend][0] if "{friend}" in template.text else ""
        cast = (NAMES[person][0], shown, items)
        return Problem(template.name, numbers, cast, question, solution, answer)

    @staticmethod
    def prompt(problem: Problem) -> str:
        """The prompt a model sees; its completion is ' ' + the solution."""
        return f"Question: {problem.question}\nAnswer:"

    def dataset_rows(self, problems: list[Problem]) -> list[dict]:
        """Rows with TRL's 'prompt' column and the 'answer' the reward reads
        (as text, like GSM8K's), plus the worked 'solution'."""
        return [
            {"prompt": self.prompt(p), "answer": str(p.answer), "solution": p.solution}
            for p in problems
        ]
