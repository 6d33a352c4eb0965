"""take's gradient compiled: pdg-scatter-index-adds turns the frontend's
dense index_add (a compare per table row and index) into a scatter. The
table's gradient with repeated indices, per point and with the batch folded
(pdg-vectorize), against NumPy's np.add.at in float64."""

from __future__ import annotations

import re

import numpy as np
import pdg.frontend as pdg
import pytest
from pdg.autodiff import grad
from pdg.lowering import native
from pdg.lowering.artifact import compile_module
from pdg.passes import pipelines
from pdg.runtime import load

VOCAB, D, N, B = 37, 8, 6, 3


def embedding_gradient_program() -> pdg.Program:
    """Per point b: loss = sum(tanh(table[ids[b]]) * w[b]); the output is
    d loss / d table, summed over the points."""
    prog = pdg.Program("embedding_gradient")
    b = prog.dim("b", launch="B")
    table = prog.input("table", (VOCAB, D), "f32")
    ids = prog.input("ids", (N,), "i64", domain=[b])
    w = prog.input("w", (N, D), "f32", domain=[b])
    loss = (pdg.tanh(pdg.take(table, ids)) * w).sum()
    (d_table,) = grad(loss, [table])
    prog.output("d_table", d_table)
    return prog


def data():
    rng = np.random.default_rng(5)
    table = rng.normal(size=(VOCAB, D)).astype(np.float32)
    # Repeats within a point and across points; some rows never named.
    ids = rng.integers(0, VOCAB // 2, size=(B, N)).astype(np.int64)
    ids[:, 1] = ids[:, 0]
    w = rng.normal(size=(B, N, D)).astype(np.float32)
    return {"table": table, "ids": ids, "w": w}


def expected(inputs) -> np.ndarray:
    table = inputs["table"].astype(np.float64)
    out = np.zeros_like(table)
    for b in range(B):
        rows = table[inputs["ids"][b]]
        np.add.at(out, inputs["ids"][b], (1.0 - np.tanh(rows) ** 2) * inputs["w"][b])
    return out


@pytest.mark.parametrize("vectorize", [False, "b"])
def test_table_gradient_matches_numpy(tmp_path, vectorize):
    compile_module(
        embedding_gradient_program().build(), tmp_path / "g.pdgx", gpu=False, vectorize=vectorize
    )
    inputs = data()
    got = load(tmp_path / "g.pdgx").run(inputs, symbols={"B": B}).outputs["d_table"]
    want = expected(inputs)
    # float32 sums of at most B * N terms of size <= 3.
    assert np.abs(np.asarray(got, np.float64) - want).max() < 1e-5
    assert np.all(np.asarray(got)[VOCAB // 2 :] == 0.0)


def loops_text(tmp_path, monkeypatch, scatter: bool) -> str:
    """The program's loops-level IR (after pipelines.to_loops), with or
    without pdg-scatter-index-adds."""
    seen = []
    checks = native.index_checks

    def record(module):
        seen.append(str(module))
        return checks(module)

    with monkeypatch.context() as m:
        m.setattr(native, "index_checks", record)
        if not scatter:
            to_loops = pipelines.to_loops
            m.setattr(
                pipelines,
                "to_loops",
                lambda *a, **k: to_loops(*a, **k).replace("pdg-scatter-index-adds,", ""),
            )
        out = tmp_path / ("scatter" if scatter else "dense")
        compile_module(embedding_gradient_program().build(), out / "g.pdgx", gpu=False)
    (text,) = seen
    return text


def test_the_frontend_index_add_becomes_a_scatter(tmp_path, monkeypatch, no_compile_cache):
    """The dense form compares a table row with each index (arith.cmpi eq
    on i64); nothing else in this program does. With the pass no such
    compare is left,
    and the table's gradient is stored at a row read from data, which
    pdg-check-indices guards like any data-dependent access."""
    dense = loops_text(tmp_path, monkeypatch, scatter=False)
    compare = re.compile(r"arith\.cmpi eq, \S+, \S+ : i64")
    assert compare.search(dense)
    scattered = loops_text(tmp_path, monkeypatch, scatter=True)
    assert not compare.search(scattered)
    assert scattered.count("pdg_index_fault(") > dense.count("pdg_index_fault(")
