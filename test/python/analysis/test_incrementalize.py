"""pdg-incrementalize on a reference model's log-probs over a finished
sequence: the sum over `lp[b, 0 : T]` after generation becomes a running
sum computed per step alongside generation; the outputs stay the same (the
interpreter is the judge) and the per-step log-probs no longer need a store
of the whole sequence."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pdg
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import stores_of
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.nn import GPT, GPTConfig
from pdg.passes.pipeline import parse_pipeline, run_pipeline
from pdg.programs import build_decode

PROMPTS = [[1, 2], [3], [4, 5, 6]]


def program():
    cfg = GPTConfig(vocab=16, d_model=8, n_layers=1, n_heads=2, max_positions=12, dtype="f64")
    decode = build_decode(cfg, eos=2, max_len=12, prompt_width=3)
    prog, b, t = decode.program, decode.batch, decode.step
    ref = GPT(prog, cfg, path="ref")
    ref_lp = pdg.log_softmax(ref(decode.token, decode.position, t))
    lp_next = pdg.take(ref_lp, decode.next_token, axis=0).named("ref_lp")
    # Written the natural way: after the sequence ends, over all of it.
    prog.output("ref_logprob", lp_next[b, 0 : t.size].sum(axis=0).named("ref_total"))
    weights = decode.model.init_weights(seed=1, scale=0.6)
    weights.update(ref.init_weights(seed=2, scale=0.6))
    inputs = decode.inputs(weights, PROMPTS)
    inputs.update(ref.inputs_from(weights))
    return str(prog.build()), inputs


def test_01_reference_logprob_sum_runs_per_step_with_the_same_result():
    text, inputs = program()
    ctx = make_context()
    before = parse_text(text, "before", ctx)
    after = parse_text(text, "after", ctx)
    pipeline = parse_pipeline("builtin.module(pdg-incrementalize,canonicalize)")
    assert run_pipeline(after, pipeline) == []
    ir_after = str(after)
    assert '"ref_total_running" [b, t]' in ir_after
    assert "%ref_total_running[b, T - 1]" in ir_after
    assert "[b, 0 : T]" not in ir_after

    want = interpret(before, inputs, symbols={"B": 3})
    got = interpret(after, inputs, symbols={"B": 3})
    np.testing.assert_array_equal(np.asarray(want.bounds["T"]), np.asarray(got.bounds["T"]))
    np.testing.assert_allclose(got.outputs["ref_logprob"], want.outputs["ref_logprob"], rtol=1e-12)
    for name in ("tokens",):
        for x, y in zip(want.outputs[name], got.outputs[name], strict=True):
            np.testing.assert_array_equal(x, y)

    kinds_before = {s.value.name: s for s in stores_of(read_graph(before.body.operations[0]))}
    kinds_after = {s.value.name: s for s in stores_of(read_graph(after.body.operations[0]))}
    assert kinds_before["ref_lp"].kind == "growable"  # the whole sequence, kept for the sum
    assert kinds_after["ref_lp"].kind == "point"
    assert (kinds_after["ref_total_running"].kind, kinds_after["ref_total_running"].extents) == (
        "window",
        ["B", "2"],
    )
