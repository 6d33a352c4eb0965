"""Outputs returned as the one-slot store they copy (returned_slots.py): a
training program's final weights and optimizer state are the update's
slot, handed to the caller without a copy. Same values as the interpreter
(float64), smaller planned peak by exactly those outputs, arrays the caller
owns, and outputs that must stay copies stay copies."""

from __future__ import annotations

import gc
import json

import numpy as np
import pdg.frontend as pdg
from pdg import optim
from pdg.interpreter import interpret
from pdg.analysis.graph import read_graph
from pdg.lowering import driver
from pdg.lowering.artifact import compile_module
from pdg.passes import pipelines
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.runtime import load

ITERS, D = 5, 6
rng = np.random.default_rng(3)
A = rng.normal(size=(ITERS, 4, D))
Y = rng.normal(size=(ITERS, 4))
W0 = rng.normal(size=(D,))
M0 = rng.normal(size=(2, 3))


def fit_program(extra_reader: bool = False):
    """Adam on a least-squares loss over I iterations; outputs the loss and
    the final weights and moments. `extra_reader`: one more output reads the
    final weights (then that output must keep its own store)."""
    prog = pdg.Program("fit")
    i = prog.dim("i", launch="I")
    prog.iterate_parameters(i)
    w = prog.parameter("w", (D,), "f64")
    m = prog.parameter("m", (2, 3), "f64")
    a = prog.input("a", (4, D), "f64", domain=[i])
    y = prog.input("y", (4,), "f64", domain=[i])
    r = a @ w - y
    loss = (r * r).sum() + (m * m).sum() * pdg.tanh(w.sum())
    training = optim.minimize(loss, {"w": w, "m": m}, optim.Adam(0.05))
    prog.output("loss", loss)
    training.add_outputs()
    inputs = training.initial_inputs({"w": W0, "m": M0})
    inputs.update(a=A, y=Y)
    if extra_reader:  # read at every point of another dim: not fused into its reader
        j = prog.dim("j", 3)
        scale = prog.input("scale", (), "f64", domain=[j])
        final_w = training.updated["w"][training.dim.size - 1].astype("f64")  # a copy node
        prog.output("final_w", final_w)
        prog.output("scaled_w", final_w * scale)
        inputs["scale"] = np.array([1.0, 2.0, -1.0])
    return prog, training, inputs


def compiled(tmp_path, prog, name="fit"):
    out = tmp_path / f"{name}.pdgx"
    compile_module(prog.build(), out, gpu=False)
    return load(out), json.loads((out / "manifest.json").read_text())


def test_final_state_is_returned_in_place_and_matches_the_interpreter(tmp_path):
    prog, training, inputs = fit_program()
    program, manifest = compiled(tmp_path, prog)
    returned = {r["output"] for r in manifest["abi"]["returned"]}
    # Two weights, each with its two Adam moments: six outputs in place.
    assert len(returned) == 6
    assert "loss" not in {o["name"] for o in manifest["abi"]["outputs"] if o["name"] in returned}
    got = program.run(inputs, symbols={"I": ITERS}).outputs
    want = interpret(prog.build(), inputs, symbols={"I": ITERS}).outputs
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, err_msg=name)


def test_the_plan_no_longer_counts_the_returned_outputs(tmp_path, monkeypatch, no_compile_cache):
    prog, _, _ = fit_program()
    _, in_place = compiled(tmp_path, prog, "in_place")
    monkeypatch.setattr(driver, "returned_slots", lambda graph, buffers: {})
    prog, _, _ = fit_program()
    _, copied = compiled(tmp_path, prog, "copied")
    assert copied["abi"]["returned"] == []
    # The six outputs: w (D), m (2 x 3) and the four moments, float64.
    saved = 8 * 3 * (D + 6)
    fixed = lambda m: dict((tuple(k), v) for k, v in m["memory"]["peak"])[()]  # noqa: E731
    assert fixed(copied) - fixed(in_place) >= saved


def test_returned_arrays_are_the_callers(tmp_path):
    """Each output owns its buffer: the arrays outlive the program and the
    run, and writing one changes no other."""
    prog, training, inputs = fit_program()
    program, _ = compiled(tmp_path, prog)
    outputs = program.run(inputs, symbols={"I": ITERS}).outputs
    weights, state = training.final_state(outputs)
    expected = {k: v.copy() for k, v in weights.items()}
    del program
    gc.collect()
    weights["w"][:] = 0.0
    for slot in state["w"].values():
        assert np.any(slot != 0.0)
    np.testing.assert_array_equal(weights["m"], expected["m"])
    # A second run from the returned state continues the training.
    again = compiled(tmp_path, prog, "again")[0]
    more = again.run(
        {**training.initial_inputs(expected, state, start_step=ITERS), "a": A, "y": Y},
        symbols={"I": ITERS},
    ).outputs
    assert np.all(np.isfinite(more["final__w"]))


def test_an_output_that_other_nodes_read_keeps_its_copy(tmp_path):
    """`final_w` copies the last update like `final__w` (pdg-dedup makes
    them one node), and another output's node reads it at every point of
    its dim: that node keeps a store of its own; the other final outputs
    are still returned in place."""
    prog, _, inputs = fit_program(extra_reader=True)
    module = prog.build()
    run_pipeline(module, parse_pipeline(pipelines.optimize()))
    graph = read_graph(next(op for op in module.body.operations if op.name == "pdg.graph"))
    value = dict(graph.outputs)["final_w"]
    read = any(r.producer is value for r in graph.reads)
    program, manifest = compiled(tmp_path, prog)
    returned = {r["output"] for r in manifest["abi"]["returned"]}
    assert read and not {"final_w", "final__w"} & returned
    assert {"final__m", "final__w__exp_avg"} <= returned
    got = program.run(inputs, symbols={"I": ITERS}).outputs
    want = interpret(prog.build(), inputs, symbols={"I": ITERS}).outputs
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(
        got["scaled_w"], np.array([1.0, 2.0, -1.0])[:, None] * got["final_w"], rtol=1e-15
    )
    # Two outputs of one value view one buffer, which is freed once, after
    # both arrays go (a second owner used to free it twice).
    assert np.shares_memory(got["final_w"], got["final__w"])
    kept = got["final_w"]
    del got
    gc.collect()
    np.testing.assert_allclose(kept, want["final_w"], rtol=1e-12)
    del kept
    gc.collect()
    again = program.run(inputs, symbols={"I": ITERS}).outputs
    np.testing.assert_allclose(again["final__w"], want["final__w"], rtol=1e-12)
