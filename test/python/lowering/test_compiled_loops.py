"""The lit test's program (test/Conversion/pdg-lower-to-loops.mlir), compiled
and run: a window read that wraps around its circular buffer, sequences
that end at their own step, and a growable output that doubles past 16
steps. The compiled outputs equal the interpreter's, also in later calls,
which start the output at the steps an earlier call grew it to."""

from __future__ import annotations

import numpy as np
import pdg.runtime
import pytest
from conftest import REPO_ROOT
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_file
from pdg.lowering.artifact import compile_module

from lowering.ragged import assert_same

PROGRAM = REPO_ROOT / "test" / "Conversion" / "pdg-lower-to-loops.mlir"


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("loops") / "loops.pdgx"
    compile_module(parse_file(str(PROGRAM), make_context()), path)
    return pdg.runtime.load(path)


@pytest.mark.parametrize(
    "x0", [[0.0, 5.0, 9.5, -20.0], [12.0], [-45.0, 1.0]], ids=["mixed", "ends-at-once", "max"]
)
def test_01_compiled_equals_interpreted(program, x0):
    inputs = {"x0": np.array(x0, np.float32)}
    symbols = {"B": len(x0)}
    ref = interpret(PROGRAM, inputs, symbols=symbols)
    got = program.run(inputs, symbols)
    np.testing.assert_array_equal(np.asarray(ref.bounds["T"]), got.bounds["T"])
    assert_same(got.outputs["w"], ref.outputs["w"])


def test_02_lengths_cover_early_ends_growth_and_the_max(program):
    got = program.run({"x0": np.array([0.0, 9.5, -20.0, -45.0], np.float32)}, {"B": 4})
    # x grows by 1.5 a step until >= 10; the dim's max is 40.
    assert got.bounds["T"].tolist() == [8, 2, 21, 38]
    got = program.run({"x0": np.array([-100.0], np.float32)}, {"B": 1})
    assert got.bounds["T"].tolist() == [40]
    assert got.outputs["w"].shape == (1, 40, 1)


def test_03_later_calls_start_where_earlier_calls_grew(tmp_path):
    path = tmp_path / "loops.pdgx"
    compile_module(parse_file(str(PROGRAM), make_context()), path)
    program = pdg.runtime.load(path)  # a library of its own: nothing reached yet
    longest = {"x0": np.array([-45.0], np.float32)}  # 38 steps, past the first 16
    first = program.run(longest, {"B": 1})
    grown = program.runtime_counter("pdg_grows")
    assert grown == 2  # 16 -> 32 -> 40 (the dim's max)
    again = program.run(longest, {"B": 1})
    assert program.runtime_counter("pdg_grows") == grown  # started at 40 steps
    assert_same(again.outputs["w"], first.outputs["w"])
    for x0 in ([0.0, 9.5, -20.0, -45.0], [12.0]):  # shorter or more rows: still exact
        inputs, symbols = {"x0": np.array(x0, np.float32)}, {"B": len(x0)}
        ref = interpret(PROGRAM, inputs, symbols=symbols)
        got = program.run(inputs, symbols)
        np.testing.assert_array_equal(np.asarray(ref.bounds["T"]), got.bounds["T"])
        assert_same(got.outputs["w"], ref.outputs["w"])
    assert program.runtime_counter("pdg_grows") == grown
