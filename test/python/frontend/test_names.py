"""The names values get in the emitted pdg.graph: a user's name is kept;
an unnamed value takes its op's name with the first suffix no other value
holds (the emitter remembers, per name, where to look next)."""

from __future__ import annotations

import re

import pdg.frontend as pdg


def emitted_names(prog) -> list[str]:
    return re.findall(r"%(\w+) = pdg\.", prog.to_mlir())


def test_unnamed_values_take_the_first_free_suffix_around_user_names():
    prog = pdg.Program("p")
    x = prog.input("x", (3,), "f32")
    a = x + x
    b = (a + x).named("add_2")  # a user's name that a suffix would give
    c = b + x
    d = c + a
    prog.output("y", d)
    # Named values are reserved first, so `add_2` is skipped, not reused.
    assert emitted_names(prog) == ["x", "add", "add_2", "add_1", "add_3"]


def test_many_values_of_one_op_are_numbered_in_order():
    prog = pdg.Program("p")
    x = prog.input("x", (3,), "f32")
    y = x
    for _ in range(50):
        y = y + x
    prog.output("y", y)
    names = emitted_names(prog)
    assert names == ["x", "add"] + [f"add_{n}" for n in range(1, 50)]
