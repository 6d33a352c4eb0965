"""A node that is not over a sequence's dims, reading every sequence at
one step of a dynamic dim (a sum over the rows at step t), may read only
sequences still running at that step: the interpreter stops on such a
read, and so does the compiled run (pdg_ended_fault), with a message
naming the read, the step and the sequence, where it used to add each
ended sequence's last value. While every sequence runs, both agree."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.interpreter import interpret
from pdg.interpreter.errors import InterpreterError
from pdg.lowering.artifact import compile_module
from pdg.runtime.loader import RunError

N = 4


def sum_over_rows_per_step(second_pass: bool) -> pf.Program:
    """x[b, t] grows until its sum passes limit[b]; s[t] sums over the rows
    at each step: of g = tanh(x x^T) in the generation loop, or with
    `second_pass`, of x scaled by its row's last step (a replay of the
    steps, once the lengths are known)."""
    prog = pf.Program("rows_per_step")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", dynamic="T", max=6)
    a = prog.input("a", (N,), "f32", domain=[b])
    limit = prog.input("limit", (), "f32", domain=[b])
    x = prog.recurrent((N,), "f32", domain=[b, t], name="x")
    x[t == 0] = a
    x[t > 0] = x[t - 1] * 1.5
    t.until((x.sum() > limit).named("done"))
    if second_pass:
        g = (x * x[t.size - 1]).named("g")
    else:
        g = pf.tanh(pf.einsum("k,n->kn", x, x)).named("g")
    prog.output("s", g[0 : b.size].sum(axis=0).named("s"))
    return prog


def inputs(limits) -> dict:
    a = np.abs(np.random.default_rng(0).standard_normal((len(limits), N))).astype(np.float32)
    return {"a": a, "limit": np.asarray(limits, np.float32)}


@pytest.fixture(params=[False, True], ids=["generation", "second_pass"])
def program(request, tmp_path):
    prog = sum_over_rows_per_step(request.param)
    path = tmp_path / "p.pdgx"
    compile_module(prog.build(), path, gpu=False)
    return prog, pdg.runtime.load(path)


def test_a_read_of_an_ended_sequence_stops_the_run(program):
    prog, compiled = program
    data = inputs([1.0, 20.0, 1e9])  # the rows end after 1, 4 and 6 steps
    with pytest.raises(InterpreterError, match="ended after 1 steps"):
        interpret(prog.build(), data, symbols={"B": 3})
    with pytest.raises(RunError) as stopped:
        compiled.run(data, {"B": 3})
    message = str(stopped.value)
    assert "'s'" in message and "'g'" in message, message
    assert "at step 1 along 't'" in message, message
    assert "ended after 1 steps for (b=0)" in message, message


def test_sequences_that_all_run_are_read_as_the_interpreter_reads_them(program):
    prog, compiled = program
    data = inputs([1e9, 1e9, 1e9])  # every row runs the dim's 6 steps
    want = interpret(prog.build(), data, symbols={"B": 3})
    got = compiled.run(data, {"B": 3})
    assert got.bounds["T"].tolist() == [6, 6, 6]
    np.testing.assert_allclose(got.outputs["s"], want.outputs["s"], rtol=1e-5, atol=1e-6)
