"""Decode at batch 1 splits its matrix-vector products over the threads.

The driver's loop over the sequences calls each step's bodies; at batch 1
it has one point, so it used to run every product on one thread. Now the
large products in those bodies are split into tiles
(pdg-parallelize-large-ops, from native.SPLIT_IN_LOOP_MIN_WORK points:
the MLP's weights, read along their rows, into tiles of whole rows that
sum into partial outputs; the tied head's table into tiles of its rows),
and the tiles run only where the loop over the sequences has one point
(the runtime's pdg_ops_split, from the points pdg-conditional-forks notes);
with more, the bodies run a copy of each op whole. That loop forks from 2
points, or a point per thread if fewer (`omp.parallel if(...)`, the
runtime's __kmpc_fork_call_if); below that it runs on the caller and the
tiles take the pool. Checked here: the program holds the conditional fork
and the choice (and the unsplit build neither), and the split build, run
on 2 threads in a fresh process, gives the interpreter's tokens and logits
(1e-5) and the unsplit build's, at batch 1 (the tiles fork) and batch 3
(the sequences fork, the bodies run their ops whole), with f32 and bf16
weights.

The shape makes every kind of product: the MLP's (128 x 512 and 512 x
128, 65536 points: cut along the summed rows) and the tied logits' (128 x
2048: cut along the table's rows) are split, the attention projections'
(128 x 128) stay whole."""

from __future__ import annotations

import numpy as np
import pytest
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering import native
from pdg.lowering.artifact import compile_module

from .test_compiled_threads import run_with_threads

SHAPE = {"vocab": 2048, "d_model": 128, "heads": 4, "layers": 2, "max_len": 16}
STEPS = 8
WEIGHT_SCALE = 0.1


def _decode(weight_dtype: str | None):
    return small_decode(
        "full", **SHAPE, eos=None, prompt_width=2, response_limit=True, weight_dtype=weight_dtype
    )


def _compile(text: str, path, split: bool) -> str:
    """Compiles `text` into `path`; returns the LLVM dialect module's text."""
    saved = native.SPLIT_IN_LOOP_MIN_WORK
    native.SPLIT_IN_LOOP_MIN_WORK = native.SPLIT_IN_LOOP_SPLIT_FROM if split else -1
    try:
        module = parse_text(text, "decode", make_context())
        compile_module(module, path, gpu=False)
    finally:
        native.SPLIT_IN_LOOP_MIN_WORK = saved
    return str(module)


@pytest.fixture(scope="module", params=["f32", "bf16"])
def builds(request, tmp_path_factory):
    """(decode, text, weights, {split: (artifact, llvm text)}) per weight dtype."""
    kind = request.param
    decode = _decode(None if kind == "f32" else "bf16")
    text = str(decode.program.build())
    weights = _decode(None).model.init_weights(seed=5, scale=WEIGHT_SCALE)
    out = {}
    for split in (True, False):
        path = tmp_path_factory.mktemp(f"{kind}-{'split' if split else 'whole'}") / "d.pdgx"
        out[split] = (path, _compile(text, path, split))
    return decode, text, weights, out


def test_the_sequence_loop_forks_only_with_a_point_per_thread(builds):
    _, _, _, out = builds
    split_llvm, whole_llvm = out[True][1], out[False][1]
    # The loop over the sequences: one conditional region, which notes its
    # points for the bodies; the tiles' own regions fork unconditionally,
    # where the bodies' choice says to.
    assert split_llvm.count("omp.parallel if(") >= 1
    assert "pdg_fork_from" in split_llvm and "pdg_loop_enter" in split_llvm
    assert "pdg_ops_split" in split_llvm
    assert split_llvm.count("omp.parallel") > split_llvm.count("omp.parallel if(")
    # Whole products: nothing inside the loop forks, so no clause, no choice.
    assert "omp.parallel if(" not in whole_llvm
    assert "pdg_ops_split" not in whole_llvm and "pdg_loop_enter" not in whole_llvm


@pytest.mark.parametrize("batch", [1, 3])
def test_split_decode_equals_interpreter_and_unsplit(builds, tmp_path, batch):
    decode, text, weights, out = builds
    prompts = [[1, 2], [7], [3, 9]][:batch]
    inputs = decode.inputs(weights, prompts, [STEPS] * batch)
    symbols = {"B": batch}
    ref = interpret(parse_text(text, "ref", make_context()), inputs, symbols=symbols)
    got = {
        split: run_with_threads(tmp_path, out[split][0], inputs, symbols, threads=2)
        for split in (True, False)
    }
    ref_logits = np.concatenate([np.asarray(x) for x in ref.outputs["logits"]])
    scale = np.abs(ref_logits).max()
    for split, outputs in got.items():
        for a, b in zip(ref.outputs["tokens"], outputs["tokens"], strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            assert len(b) == STEPS
        logits = np.concatenate([np.asarray(x) for x in outputs["logits"]])
        assert np.abs(logits - ref_logits).max() / scale < 1e-5, f"split={split}"
    split_logits, whole_logits = (
        np.concatenate([np.asarray(x) for x in got[s]["logits"]]) for s in (True, False)
    )
    assert np.abs(split_logits - whole_logits).max() / scale < 1e-5


@pytest.mark.parametrize("batch", [1, 3])
def test_every_thread_count_runs_the_same_code(builds, tmp_path, batch):
    """Which form of a split product runs (tiles at batch 1, the op whole at
    batch 3) depends on the loop's points, never on the threads: 1, 2 and 3
    threads give the same tokens and logits, to the bit."""
    decode, _, weights, out = builds
    inputs = decode.inputs(weights, [[1, 2], [7], [3, 9]][:batch], [STEPS] * batch)
    runs = {
        n: run_with_threads(tmp_path, out[True][0], inputs, {"B": batch}, threads=n)
        for n in (1, 2, 3)
    }
    for n in (2, 3):
        for name in ("tokens", "logits"):
            got = np.concatenate([np.asarray(x).ravel() for x in runs[n][name]])
            want = np.concatenate([np.asarray(x).ravel() for x in runs[1][name]])
            assert got.tobytes() == want.tobytes(), f"{name} on {n} threads"
