"""A window one step shorter when its oldest step is read before the step
writes it (pdg.analysis.slot_reuse): compiled against the interpreter.

c[b, t] takes p[b, t - 1] at the start of step t and p[b, t] is written at
its end (a point store: the slot is read, then overwritten); d takes the
slice q[b, t - 2 : t] of the two steps before (a window of 2, read across
its wrap-around); e runs backward over s, taking r[b, s + 1] (the mirror
image). Each consumer and its producer share one parallel loop over b, so
a thread reads its own slot before it writes it, and no other thread
touches it."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
from pdg.analysis.attached_schedule import attached_slots
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import stores_of
from pdg.analysis.storage import plan_storage
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.lowering.lower import lower_to_loops
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.passes.pipelines import optimize

from lowering.test_compiled_threads import run_with_threads

STEPS = 7


def program() -> str:
    prog = pf.Program("reuse")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", STEPS)
    s = prog.dim("s", STEPS)
    x = prog.input("x", (4,), "f32", domain=[b, t])
    z = prog.input("z", (4,), "f32", domain=[b, s])

    c = prog.recurrent((4,), "f32", domain=[b, t], name="c")
    p = pf.tanh(c * 0.5 + x).named("p")
    c[t == 0] = x * 0.25
    c[t > 0] = p[t - 1] * 2.0 - x

    d = prog.recurrent((4,), "f32", domain=[b, t], name="d")
    q = pf.tanh(d * 0.5 - x).named("q")
    d[t < 2] = x * 0.5
    d[t >= 2] = q[t - 2 : t].sum(axis=0) * 0.75 + x

    e = prog.recurrent((4,), "f32", domain=[b, s], name="e")
    r = pf.tanh(e * 0.4 - z).named("r")
    e[s == STEPS - 1] = z * 0.3
    e[s < STEPS - 1] = r[s + 1] * 1.5 + z

    for v in (c, d, e):
        prog.output(v.name, v)
    return str(prog.build())


def planned(text: str):
    module = parse_text(text, "reuse", make_context())
    assert not run_pipeline(module, parse_pipeline(optimize()))
    graph_op = next(op.operation for op in module.body.operations if op.name == "pdg.graph")
    return module, read_graph(graph_op)


def test_the_oldest_slot_is_reused_after_the_schedule():
    _, graph = planned(program())
    attached = {s.value.name: (s.kind, s.extents) for s in stores_of(graph)}
    # Without the schedule (pdg-plan-storage alone), one step more each.
    alone = {s.value.name: (s.kind, s.extents) for s in plan_storage(graph)}
    assert alone["p"] == alone["r"] == ("window", ["B", "2"]), alone
    assert alone["q"] == ("window", ["B", "3"]), alone
    assert attached["p"] == attached["r"] == ("point", ["B", "1"]), attached
    assert attached["q"] == ("window", ["B", "2"]), attached
    # The plan the pass attached is the one the analysis gives by that schedule.
    by_schedule = plan_storage(graph, slots=attached_slots(graph))
    assert {s.value.name: (s.kind, s.extents) for s in by_schedule} == attached


def test_each_reader_shares_its_producers_parallel_loop():
    """In the entry, every call of c's, d's and e's bodies shares its
    scf.parallel with the producer's it reads (so the shrink is checked
    where the consumer and the producer run at once)."""
    module, _ = planned(program())
    lower_to_loops(module)
    entry = str(module).split("func.func @pdg_reuse(")[1].split("\n  func.func")[0]
    loops, inside = [], False
    for line in entry.splitlines():
        if "scf.parallel" in line:
            loops.append(set())
            inside = True
        elif "scf.reduce" in line:
            inside = False
        elif inside and "func.call @reuse_" in line:
            loops[-1].add(line.split("func.call @reuse_")[1].split("_", 1)[0])
    for pair in ({"c", "p"}, {"d", "q"}, {"e", "r"}):
        assert any(pair <= members for members in loops), (pair, loops)


def test_reused_slots_compute_what_the_interpreter_does(tmp_path):
    text = program()
    rng = np.random.default_rng(3)
    batch = 5
    inputs = {
        "x": rng.standard_normal((batch, STEPS, 4)).astype(np.float32),
        "z": rng.standard_normal((batch, STEPS, 4)).astype(np.float32),
    }
    want = interpret(parse_text(text, "reuse", make_context()), inputs, {"B": batch}).outputs
    path = tmp_path / "reuse.pdgx"
    compile_module(parse_text(text, "reuse", make_context()), path, gpu=False)
    for threads in (1, 2):
        got = run_with_threads(tmp_path, path, inputs, {"B": batch}, threads)
        for name in ("c", "d", "e"):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
