"""Consecutive nodes over the same parallel dims share one parallel loop
(pdg/lowering/driver.py): in a step, each thread runs the whole run of
nodes at its points, with one fork and one barrier of the pool for the run
instead of one per node. A node that needs every point of a member (a sum
over the batch) runs after the run's barrier, and the nodes after it start
a new run."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from pdg.lowering.lower import lower_to_loops
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.passes.pipelines import optimize

from lowering.test_compiled_threads import run_with_threads

STEPS = 6


def program() -> str:
    """h over [b, t] (a recurrence); y and z per point of h; u and o per
    point, each also reading a sum over b of the step's h."""
    prog = pf.Program("shared")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", STEPS)
    x = prog.input("x", (4,), "f32", domain=[b])
    h = prog.recurrent((4,), "f32", domain=[b, t], name="h")
    h[t == 0] = pf.tanh(x)
    h[t > 0] = pf.tanh(h[t - 1] * 0.5 + 1.0)
    y = (h * 2.0).named("y")
    z = (pf.exp(y) * h).named("z")
    u = (y * pf.tanh(h[0 : b.size, t]).sum(axis=0)).named("u")  # every b's h
    s = h[0 : b.size, t].sum(axis=0).named("s")
    o = (z + s).named("o")
    for v in (y, z, u, o):
        prog.output(v.name, v)
    return str(prog.build())


def step_loops(text: str) -> list[list[str]]:
    """The entry's step loop (over t) as its parallel loops in order, each
    the nodes it calls; a node called outside one is a list of its own."""
    module = parse_text(text, "shared", make_context())
    assert not run_pipeline(module, parse_pipeline(optimize()))
    lower_to_loops(module)
    entry = str(module).split("func.func @pdg_shared(")[1]
    step = entry.split("scf.for", 1)[1]
    loops, inside = [], False
    for line in step.splitlines():
        if "scf.parallel" in line:
            loops.append([])
            inside = True
        elif "scf.reduce" in line:
            inside = False
        elif "func.call @shared_" in line:
            node = line.split("func.call @shared_")[1].split("_into")[0].rsplit("_", 1)[0]
            if inside:
                loops[-1].append(node)
            else:
                loops.append([f"{node} (serial)"])
    return loops


def test_a_step_runs_its_per_point_nodes_in_one_parallel_loop():
    loops = step_loops(program())
    # h's two cases, y and z at each point in one loop; the sums over b
    # (no free dim: on the calling thread) after its barrier; u and o, each
    # after its sum. s sums h over b as `reduce` sums tanh_2: the same code,
    # so its call is to reduce's wrapper (pdg.lowering.lower._shared_bodies).
    assert loops == [
        ["h", "h", "y", "z"],
        ["tanh_2 (serial)"],
        ["reduce (serial)"],
        ["u"],
        ["reduce (serial)"],
        ["o"],
    ], loops


def test_shared_loops_compute_what_the_interpreter_does(tmp_path):
    text = program()
    rng = np.random.default_rng(0)
    batch = 5
    inputs = {"x": rng.standard_normal((batch, 4)).astype(np.float32)}
    want = interpret(parse_text(text, "shared", make_context()), inputs, {"B": batch}).outputs
    path = tmp_path / "shared.pdgx"
    compile_module(parse_text(text, "shared", make_context()), path, gpu=False)
    for threads in (1, 2):
        got = run_with_threads(tmp_path, path, inputs, {"B": batch}, threads)
        for name in ("y", "z", "u", "o"):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
