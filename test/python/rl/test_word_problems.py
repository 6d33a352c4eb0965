"""pdg.rl.tasks: the GSM8K-style word problems (seeded, their train and
held-out splits disjoint, every worked solution right) and the exact
checker of their answers."""

from __future__ import annotations

import re

import pytest
from pdg.rl.tasks import WordProblems, correct_answer, final_answer
from pdg.rl.tasks.word_problems import TEMPLATES


@pytest.mark.parametrize(
    "text, expected",
    [
        ("7+5=12. #### 12", 12),
        ("3*4=12. 12+5=17. #### 17", 17),
        ("#### 1,200", 1200),
        ("####17", 17),
        ("#### 0017", 17),
        ("#### -3", -3),
        ("#### 12 apples", 12),
        ("#### 17.", 17),  # the sentence's full stop
        ("#### 3 and then #### 4", 4),  # the last marker counts
        ("7+5=12. 12", None),  # no marker: no answer
        ("#### twelve", None),
        ("#### 17.5", None),  # not a whole number
        ("#### 12,34", None),
        ("#### 1234,567", None),
        ("", None),
    ],
)
def test_final_answer_reads_the_number_after_the_last_marker(text, expected):
    assert final_answer(text) == expected


def test_correct_answer_is_exact():
    completions = [" 7+5=12. #### 12", " 7+5=12. #### 120", " 12", " #### 12", "#### 1"]
    assert correct_answer(completions, ["12"] * 5) == [1.0, 0.0, 0.0, 1.0, 0.0]
    chat = [[{"role": "assistant", "content": "6*2=12. #### 12"}]]
    assert correct_answer(chat, ["12"]) == [1.0]


def test_the_same_seed_draws_the_same_problems():
    task = WordProblems()
    assert task.problems("train", 200, seed=3) == task.problems("train", 200, seed=3)
    assert task.problems("train", 200, seed=3) != task.problems("train", 200, seed=4)
    # A fresh instance agrees: nothing depends on state or on Python's hash seed.
    assert WordProblems().problems("held_out", 50, seed=1) == task.problems("held_out", 50, seed=1)


@pytest.mark.parametrize("split_by", ["numbers", "story"])
def test_train_and_held_out_are_disjoint(split_by):
    task = WordProblems(split_by=split_by)

    def key(p):
        return (p.template, p.numbers) if split_by == "numbers" else p.cast

    train = task.problems("train", 3000, seed=0)
    # Other seeds for the held-out side: the split does not depend on them.
    held_out = [p for seed in range(3) for p in task.problems("held_out", 300, seed=seed)]
    assert not {key(p) for p in train} & {key(p) for p in held_out}
    assert not {p.question for p in train} & {p.question for p in held_out}
    assert all(task.split_of(p) == "train" for p in train)
    assert all(task.split_of(p) == "held_out" for p in held_out)
    # About one key in held_out_every (8) is held out.
    drawn = WordProblems(held_out_every=1000, split_by=split_by).problems("train", 4000, seed=9)
    share = sum(task.split_of(p) == "held_out" for p in drawn) / len(drawn)
    assert 0.05 < share < 0.2


def test_a_story_split_holds_out_casts_not_words():
    task = WordProblems(split_by="story")
    train = task.problems("train", 3000, seed=0)
    held_out = task.problems("held_out", 300, seed=0)
    # Every name and object of the held-out stories is seen in training ...
    seen = {w for p in train for w in p.cast}
    assert all(w in seen for p in held_out for w in p.cast)
    # ... and the arithmetic too: a held-out problem's numbers are a training one's.
    assert {(p.template, p.numbers) for p in held_out} & {(p.template, p.numbers) for p in train}
    # A friend the story never names is no part of its cast.
    gains = [p for p in train if p.template == "gain"]
    assert gains and all(p.cast[1] == "" for p in gains)


def test_unique_draws_no_question_twice():
    problems = WordProblems().problems("held_out", 400, seed=0, unique=True)
    assert len({p.question for p in problems}) == 400


def test_every_template_is_drawn_and_every_solution_is_right():
    task = WordProblems(limit=20)
    problems = task.problems("train", 2000, seed=0)
    assert {p.template for p in problems} == {t.name for t in TEMPLATES}
    step = re.compile(r"(\d+)([-+*/])(\d+)=(\d+)\.")
    for p in problems:
        steps = step.findall(p.solution)
        assert steps and p.solution.endswith(f"#### {p.answer}"), p
        for a, op, b, value in steps:
            a, b, value = int(a), int(b), int(value)
            if op == "/":
                assert a % b == 0, p
            exact = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else None}[op]
            assert exact == value, p
        assert int(steps[-1][3]) == p.answer == final_answer(p.solution)
        # Every number of the story is in the question, the answer is a whole number >= 0.
        assert all(str(n) in p.question for n in p.numbers), p
        assert p.answer >= 0


def test_templates_can_be_chosen_and_rows_carry_the_answer():
    task = WordProblems(limit=9, templates=("gain", "loss"))
    problems = task.problems("train", 50, seed=0)
    assert {p.template for p in problems} <= {"gain", "loss"}
    assert max(max(p.numbers) for p in problems) <= 18  # loss: the given away + a draw
    [row] = task.dataset_rows(problems[:1])
    assert row["prompt"] == f"Question: {problems[0].question}\nAnswer:"
    assert row["answer"] == str(problems[0].answer)
    assert correct_answer([" " + row["solution"]], [row["answer"]]) == [1.0]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"limit": 3}, "limit must be an integer of at least 4"),
        ({"limit": True}, "limit must be an integer"),
        ({"held_out_every": 1}, "held_out_every must be at least 2"),
        ({"templates": ("gain", "nope")}, "unknown templates ['nope']; choose from gain"),
        ({"templates": ()}, "give at least one template"),
        ({"split_by": "names"}, "split_by must be one of ('numbers', 'story')"),
    ],
)
def test_bad_options_are_refused(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        WordProblems(**options)


def test_bad_requests_are_refused():
    task = WordProblems(limit=4, templates=("gain",))
    with pytest.raises(ValueError, match="split must be one of"):
        task.problems("test", 1)
    # 'gain' with numbers in [2, 4] has 9 combinations, 8 names, 8 objects:
    # 576 questions in all, not 600.
    with pytest.raises(ValueError, match="could not draw 600 distinct train problems"):
        task.problems("train", 600, unique=True)
