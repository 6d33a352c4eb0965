"""Values updated in place along the iterations (updated_in_place.py): a
training program's weights and moments share one store with their update.
Same values as the interpreter (float64), a planned peak smaller by
exactly those stores, the update bufferized in place, and a carrier that
is read after its update keeps its own store. The initial weights and
moments are the stores' buffers: donated arrays are written, others
copied first."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from pdg.interpreter import interpret
from pdg.lowering import lower
from pdg.lowering.artifact import compile_module
from pdg.lowering.lower import lower_to_loops
from pdg.passes import pipelines
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.runtime import RunError, load

from .test_returned_slots import D, ITERS, fit_program

# The weights and moments over the iterations, and the update of each.
CARRIERS = {
    "w_at": "sub",
    "w_exp_avg": "add_6",
    "w_exp_avg_sq": "add_7",
    "m_at": "sub_1",
    "m_exp_avg": "add_10",
    "m_exp_avg_sq": "add_11",
}


def compiled(tmp_path, prog, name):
    out = tmp_path / f"{name}.pdgx"
    compile_module(prog.build(), out, gpu=False)
    return load(out), json.loads((out / "manifest.json").read_text())


def fixed_peak(manifest) -> int:
    return dict((tuple(k), v) for k, v in manifest["memory"]["peak"])[()]


def check_against_interpreter(program, prog, inputs):
    got = program.run(inputs, symbols={"I": ITERS}).outputs
    want = interpret(prog.build(), inputs, symbols={"I": ITERS}).outputs
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    return got


def test_weights_and_moments_share_their_updates_store(tmp_path, monkeypatch, no_compile_cache):
    prog, _, inputs = fit_program()
    program, manifest = compiled(tmp_path, prog, "in_place")
    pairs = {p["value"]: p["store"] for p in manifest["abi"]["in_place"]}
    assert pairs == CARRIERS
    check_against_interpreter(program, prog, inputs)
    # Without the pairs, each carrier is a store of its own: w (D) and its
    # moments, m (2 x 3) and its moments, float64.
    monkeypatch.setattr(lower, "find_in_place", lambda model, funcs: {})
    prog, _, _ = fit_program()
    _, apart = compiled(tmp_path, prog, "apart")
    assert apart["abi"]["in_place"] == []
    assert fixed_peak(apart) - fixed_peak(manifest) >= 8 * 3 * (D + 6)
    plan = load(tmp_path / "in_place.pdgx").plan({"I": ITERS})
    placed = {s.value: (s.placed, s.bytes) for s in plan.stores}
    assert all(placed[c] == ("in place", 0) for c in CARRIERS)
    assert sum(plan.by_placement().values()) == plan.peak


def test_the_update_reads_and_writes_one_buffer():
    """Adam's update of w is elementwise: bufferized, its loop reads the
    old weights from the slot it writes (no temporary, no copy), and the
    entry no longer copies the update into the carrier."""
    prog, _, _ = fit_program()
    module = prog.build()
    run_pipeline(module, parse_pipeline(pipelines.optimize()))
    lower_to_loops(module)
    funcs = {str(op.operation.attributes["sym_name"]): str(op) for op in module.body.operations}
    body = funcs['"fit_sub_0_in_place0_into"']
    assert "memref.alloc" not in body and "memref.copy" not in body
    params = body.split("{")[0]
    slot = re.findall(r"%arg\d+", params)[-1]  # the destination
    assert re.search(rf"ins\({slot}, .*outs\({slot} :", body)
    # The entry calls neither of the carrier's copies: of the previous
    # step, and of the input at the first (the store is the input's buffer).
    entry = funcs['"pdg_fit"']
    assert "@fit_w_at_0_into" not in entry and "@fit_w_at_1_into" not in entry
    assert re.search(r"memref\.expand_shape %arg0 \[\[0, 1\]\] output_shape \[1, 6\]", entry)


def test_a_carrier_read_after_its_update_keeps_its_store(tmp_path):
    """`step_taken` reads the weights and their update at the same
    iteration: it runs after the update, so w keeps a store of its own
    (its moments and m are still updated in place)."""
    prog, training, inputs = fit_program()
    w, new_w = training.params["w"], training.updated["w"]
    prog.output("step_taken", (new_w - w).astype("f64"))
    program, manifest = compiled(tmp_path, prog, "read_after")
    pairs = {p["value"] for p in manifest["abi"]["in_place"]}
    assert "w_at" not in pairs and pairs == set(CARRIERS) - {"w_at"}
    got = check_against_interpreter(program, prog, inputs)
    assert np.all(np.abs(got["step_taken"]) > 0)


DONATED = {  # each weight and moment's input -> its update
    "w": "sub",
    "w__exp_avg": "add_6",
    "w__exp_avg_sq": "add_7",
    "m": "sub_1",
    "m__exp_avg": "add_10",
    "m__exp_avg_sq": "add_11",
}


def copies(inputs):
    return {k: np.array(v, copy=True) for k, v in inputs.items()}


def test_donated_inputs_are_written_and_kept_ones_are_not(tmp_path):
    prog, _, inputs = fit_program()
    program, manifest = compiled(tmp_path, prog, "donated")
    assert {d["input"]: d["store"] for d in manifest["abi"]["donated"]} == DONATED
    plan = program.plan({"I": ITERS})
    assert {s.value for s in plan.stores if s.placed == "donated"} == set(DONATED.values())
    want = interpret(prog.build(), copies(inputs), symbols={"I": ITERS}).outputs
    given = copies(inputs)
    kept = program.run(given, symbols={"I": ITERS}).outputs
    for name in inputs:  # not donated: copied before the run
        np.testing.assert_array_equal(given[name], inputs[name])
    assert not np.shares_memory(kept["final__w"], given["w"])
    donated = program.run(given, symbols={"I": ITERS}, donate=list(DONATED)).outputs
    for name, value in want.items():
        np.testing.assert_allclose(kept[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(donated[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    # The returned weights and moments are the donated arrays, now updated.
    assert np.shares_memory(donated["final__w"], given["w"])
    np.testing.assert_array_equal(given["w"], donated["final__w"])
    np.testing.assert_array_equal(given["a"], inputs["a"])  # not a donated input


def test_a_donated_array_that_another_input_shares_is_copied(tmp_path):
    """One zeros array given for both of w's moments (and the weights'
    array for nothing else): written in place, the first moment's update
    would change the second's input. The run copies it."""
    prog, _, inputs = fit_program()
    program, _ = compiled(tmp_path, prog, "shared")
    want = interpret(prog.build(), copies(inputs), symbols={"I": ITERS}).outputs
    given = copies(inputs)
    zeros = np.zeros(D)
    given["w__exp_avg"] = given["w__exp_avg_sq"] = zeros
    got = program.run(given, symbols={"I": ITERS}, donate=list(DONATED)).outputs
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12, err_msg=name)
    assert not np.any(zeros) and np.shares_memory(got["final__m"], given["m"])


def test_donating_an_unknown_input_is_one_line(tmp_path):
    prog, _, inputs = fit_program()
    program, _ = compiled(tmp_path, prog, "unknown")
    with pytest.raises(RunError, match="donate names unknown input\\(s\\) wq"):
        program.run(inputs, symbols={"I": ITERS}, donate=["wq"])
    with pytest.raises(RunError, match="collection of input names"):
        program.run(inputs, symbols={"I": ITERS}, donate="w")


def test_the_driver_refuses_an_update_before_a_reader(tmp_path, monkeypatch, no_compile_cache):
    """If the order the pairs were chosen by ever disagreed with the order
    the Driver emits, the lowering stops instead of writing over weights a
    later node reads (here the chosen order puts `step_taken`'s node, which
    reads w and its update, first)."""
    from pdg.lowering import updated_in_place
    from pdg.lowering.artifact import CompileError

    emitted = updated_in_place.emission_key

    def chosen(node, depth):
        reads = {r.producer.name for r in node.value.reads}
        return (-1,) if {"w_at", "sub"} <= reads else emitted(node, depth)

    monkeypatch.setattr(updated_in_place, "emission_key", chosen)
    prog, training, _ = fit_program()
    w, new_w = training.params["w"], training.updated["w"]
    prog.output("step_taken", (new_w - w).astype("f64"))
    with pytest.raises(CompileError, match="is written over 'w_at' before"):
        compile_module(prog.build(), tmp_path / "p.pdgx", gpu=False)
