"""pdg-vectorize keeps every output: programs are interpreted before and
after folding b into the point type (the decode programs are covered by
test_passes_preserve_semantics). Sequences still end on their own."""

from __future__ import annotations

import numpy as np
from conftest import REPO_ROOT
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_file, parse_text
from pdg.passes.pipeline import parse_pipeline, run_pipeline

PROGRAMS = REPO_ROOT / "test" / "python" / "interpreter" / "programs"


def _vectorized(module) -> None:
    assert run_pipeline(module, parse_pipeline("builtin.module(pdg-vectorize)")) == []


def test_01_scan_over_a_batch():
    rng = np.random.default_rng(0)
    inputs = {
        "a": rng.standard_normal(10).astype(np.float32),
        "ab": rng.integers(-5, 5, size=(3, 10)).astype(np.int64),
    }
    ctx = make_context()
    before = interpret(parse_file(str(PROGRAMS / "scan.mlir"), ctx), inputs, symbols={"B": 3})
    module = parse_file(str(PROGRAMS / "scan.mlir"), ctx)
    _vectorized(module)
    assert "tensor<?xi64>" in str(module)  # a value over [b, t] is now over [t]
    after = interpret(module, inputs, symbols={"B": 3})
    for name, value in before.outputs.items():
        np.testing.assert_array_equal(value, after.outputs[name])


def test_02_decode_steps_batch_and_sequences_end_apart():
    decode = small_decode("window:3", vocab=16, d_model=8, max_len=24, eos=5, prompt_width=3)
    text = str(decode.program.build())
    inputs = decode.inputs(decode.model.init_weights(seed=5, scale=0.7), [[1, 2, 3], [4], [5, 6]])
    ctx = make_context()
    before = interpret(parse_text(text, "before", ctx), inputs, symbols={"B": 3})
    module = parse_text(text, "after", ctx)
    _vectorized(module)
    printed = str(module)
    # Every node but the three unpack nodes (outputs and `done`) left [b, t].
    assert printed.count('" [b, t]') == 3
    assert '"logits" [t]' in printed and "tensor<?x16xf32>" in printed
    after = interpret(module, inputs, symbols={"B": 3})
    assert before.bounds["T"].tolist() == after.bounds["T"].tolist() == [24, 3, 24]
    for a, b in zip(before.outputs["tokens"], after.outputs["tokens"], strict=True):
        np.testing.assert_array_equal(a, b)


def test_03_constant_cases_and_values_that_do_not_vary():
    text = (REPO_ROOT / "test" / "Graph" / "pdg-vectorize.mlir").read_text()
    program = text.split("// -----")[2]
    inputs = {"prompt": np.array([3, 5, 7], np.int64)}
    ctx = make_context()
    before = interpret(parse_text(program, "before", ctx), inputs, symbols={"B": 3})
    module = parse_text(program, "after", ctx)
    _vectorized(module)
    after = interpret(module, inputs, symbols={"B": 3})
    for name in ("same", "next"):
        np.testing.assert_array_equal(before.outputs[name], after.outputs[name])
    np.testing.assert_array_equal(after.outputs["next"][:, 3], [9, 15, 21])


def test_04_a_loss_over_the_whole_batch():
    """A reader without b (a mean over the batch) reads the per-sequence
    rows of the batched values; its gradient picks row b back by the
    coordinate b, a node that stays per-sequence and is read whole."""
    import pdg.frontend as pdg
    from pdg.autodiff import grad

    prog = pdg.Program("batch_loss")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (3,), "f64", domain=[b])
    w = prog.input("w", (3,), "f64")
    y = pdg.tanh(x * w)
    loss = (y * y).sum()[0 : b.size].mean()
    (dw,) = grad(loss, [w])
    prog.output("loss", loss)
    prog.output("dw", dw)
    inputs = {"x": np.random.default_rng(1).normal(size=(4, 3)), "w": np.ones(3) * 0.5}
    ctx = make_context()
    before = interpret(parse_text(prog.to_mlir(), "p", ctx), inputs, symbols={"B": 4})
    module = parse_text(prog.to_mlir(), "p", ctx)
    _vectorized(module)
    assert "_row" in str(module)
    after = interpret(module, inputs, symbols={"B": 4})
    for name, value in before.outputs.items():
        np.testing.assert_allclose(value, after.outputs[name], rtol=1e-12)
