"""Sums over parallel dims kept per thread (`partial` stores): a value read
only by its sum over the batch is not stored per example. Compiled against
the interpreter, the plan read off the graph, and the peak memory: it
does not grow with the batch by a weight per example."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.analysis.graph import read_graph
from pdg.analysis.memory import stores_of
from pdg.interpreter import interpret
from pdg.lowering.artifact import compile_module
from pdg.passes.pipeline import parse_pipeline, run_pipeline

IN, OUT = 16, 32


def per_example_steps(n_in: int = IN, n_out: int = OUT) -> pf.Program:
    """Steps w[i] = w[i - 1] - 0.1 s[i - 1], s the sum over the batch of a
    weight-sized value per example (squashed, so that it is not one
    contraction over the batch: pdg-contract-reductions leaves it)."""
    prog = pf.Program("per_example")
    i = prog.dim("i", launch="I")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (n_in,), "f32", domain=[b])
    w0 = prog.input("w0", (n_in, n_out), "f32")
    w = prog.recurrent((n_in, n_out), "f32", domain=[i], name="w")
    y = pf.tanh(pf.matmul(x, w)).named("y")
    grad = pf.tanh(pf.einsum("k,n->kn", x, y)).named("grad")  # over [i, b]
    s = grad[0 : b.size].sum(axis=0).named("s")
    w[i == 0] = w0
    w[i > 0] = w[i - 1] - s[i - 1] * 0.1
    prog.output("w", w)
    prog.output("bias", y[0 : b.size].max().named("most"))  # a max: not a partial sum
    return prog


def planned_stores(prog: pf.Program) -> dict[str, str]:
    module = prog.build()
    errors = run_pipeline(module, parse_pipeline("builtin.module(pdg-plan-storage)"))
    assert not errors
    graph = [op for op in module.body.operations if op.operation.name == "pdg.graph"][0]
    return {s.value.name: s.kind for s in stores_of(read_graph(graph.operation))}


def test_only_the_sum_over_the_batch_is_partial():
    kinds = planned_stores(per_example_steps())
    assert kinds["grad"] == "partial"
    assert kinds["y"] != "partial"  # read by the max and by grad


@pytest.mark.parametrize("batch", [1, 3, 37])
def test_compiled_partial_sums_match_the_interpreter(tmp_path, batch):
    prog = per_example_steps()
    rng = np.random.default_rng(batch)
    inputs = {
        "x": rng.standard_normal((batch, IN)).astype(np.float32),
        "w0": (0.3 * rng.standard_normal((IN, OUT))).astype(np.float32),
    }
    symbols = {"I": 4, "B": batch}
    want = interpret(prog.build(), inputs, symbols=symbols).outputs
    compile_module(prog.build(), tmp_path / "p.pdgx", gpu=False)
    got = pdg.runtime.load(tmp_path / "p.pdgx").run(inputs, symbols).outputs
    # The per-thread sums add the examples in another order than the
    # interpreter's: float32 rounding.
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["bias"], want["bias"], rtol=1e-5, atol=1e-6)


def test_peak_memory_does_not_hold_a_gradient_per_example(tmp_path):
    prog = per_example_steps()
    compile_module(prog.build(), tmp_path / "p.pdgx", gpu=False)
    program = pdg.runtime.load(tmp_path / "p.pdgx")
    rng = np.random.default_rng(0)
    peaks = {}
    for batch in (8, 512):
        inputs = {
            "x": rng.standard_normal((batch, IN)).astype(np.float32),
            "w0": rng.standard_normal((IN, OUT)).astype(np.float32),
        }
        peaks[batch] = program.run(inputs, {"I": 2, "B": batch}).peak_bytes
    per_example = IN * OUT * 4
    # 504 more examples: their inputs and activations (IN + OUT floats
    # each), not 504 more gradients.
    grown = peaks[512] - peaks[8]
    assert grown < 504 * per_example / 4, (peaks, per_example)


def test_a_chunk_of_one_example_needs_no_scratch(tmp_path):
    """Each chunk of one example writes its partial sum directly: with one
    example, the run holds the one chunk's gradient and no scratch slot per
    thread; from 17 examples on, chunks hold several and the threads'
    scratch slots appear."""
    n = 256
    prog = per_example_steps(n, n)
    compile_module(prog.build(), tmp_path / "p.pdgx", gpu=False)
    program = pdg.runtime.load(tmp_path / "p.pdgx")
    rng = np.random.default_rng(0)
    gradient = n * n * 4
    over_plan = {}
    for batch in (1, 16, 17):
        inputs = {
            "x": rng.standard_normal((batch, n)).astype(np.float32),
            "w0": rng.standard_normal((n, n)).astype(np.float32),
        }
        symbols = {"I": 2, "B": batch}
        planned, _, _ = program.planned_peak(symbols)  # counts one partial sum
        over_plan[batch] = (program.run(inputs, symbols).peak_bytes - planned) / gradient
    # One example: the plan, and a body's temporary of a gradient's size
    # (a scratch slot per thread would make it 2 or more).
    assert over_plan[1] < 1.5, over_plan
    assert over_plan[16] - over_plan[1] >= 15, over_plan  # 15 more chunks
    assert over_plan[17] - over_plan[16] >= 1, over_plan  # a scratch slot per thread
