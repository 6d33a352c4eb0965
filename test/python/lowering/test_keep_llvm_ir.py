"""$PDG_KEEP_LLVM_IR=DIR: a compile leaves the LLVM IR it gave opt in DIR
(for profiling opt and llc on one program), and the artifact still runs."""

from __future__ import annotations

import numpy as np
from pdg.lowering import compile_cache
from pdg.lowering.artifact import compile_module

from .test_artifact_cache import run, scaled


def test_the_llvm_ir_is_kept_where_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(compile_cache.ENV, raising=False)  # a cache hit compiles nothing
    keep = tmp_path / "ir" / "kept"
    monkeypatch.setenv("PDG_KEEP_LLVM_IR", str(keep))
    compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    (kept,) = keep.glob("program-*.ll")
    text = kept.read_text()
    assert "define void @_mlir_ciface_pdg_scaled(" in text
    assert "@scaled_y_0_into(" in text  # the node's body, before opt inlines it
    np.testing.assert_array_equal(run(tmp_path / "a.pdgx"), np.arange(6).reshape(2, 3) * 2.0)


def test_nothing_is_kept_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv(compile_cache.ENV, raising=False)
    monkeypatch.delenv("PDG_KEEP_LLVM_IR", raising=False)
    monkeypatch.chdir(tmp_path)
    compile_module(scaled(2.0).build(), tmp_path / "a.pdgx", gpu=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pdgx"]
