"""Values updated in place along the iterations (updated_in_place.py): a
training program's weights and moments share one store with their update.
Same values as the interpreter (float64), a planned peak smaller by
exactly those stores, the update bufferized in place, and a carrier that
is read after its update keeps its own store."""

from __future__ import annotations

import json
import re

import numpy as np
from pdg.interpreter import interpret
from pdg.lowering import lower
from pdg.lowering.artifact import compile_module
from pdg.lowering.lower import lower_to_loops
from pdg.passes import pipelines
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.runtime import load

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
    # The entry no longer calls the carrier's copy of the previous step.
    assert "@fit_w_at_0_into" in funcs['"pdg_fit"']
    assert "@fit_w_at_1_into" not in funcs['"pdg_fit"']


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
