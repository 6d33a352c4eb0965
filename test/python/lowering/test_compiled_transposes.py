"""Transposes compiled with pdg-tile-transposes (native.TRANSPOSE_TILE):
copied in blocks along the two dims that swap, they give exactly the
transpose NumPy gives, at sizes that leave ragged blocks, split over the
pool's threads (pdg-parallelize-large-ops cuts the output's rows first),
with a third dim, and in bf16; untiled (TRANSPOSE_TILE = 0) too."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.lowering import native
from pdg.lowering.artifact import compile_module


def transposed(tmp_path, shape, perm, dtype="f32", tile=None, monkeypatch=None):
    prog = pf.Program("transpose")
    w = prog.input("w", shape, dtype)
    prog.output("t", pf.permute(w, perm).named("t"))
    if tile is not None:
        monkeypatch.setattr(native, "TRANSPOSE_TILE", tile)
    path = tmp_path / "t.pdgx"
    compile_module(prog.build(), path, gpu=False)
    return pdg.runtime.load(path)


@pytest.mark.parametrize(
    "shape, perm",
    [
        ((3072, 768), (1, 0)),  # gpt2's MLP projection: 12 output rows per thread tile
        ((768, 3072), (1, 0)),  # 48 rows per thread tile: 3 blocks of 16
        ((1000, 37), (1, 0)),  # ragged blocks along both dims
        ((37, 1000), (1, 0)),
        ((3, 130, 70), (0, 2, 1)),  # the last two swapped, the first whole
        ((40, 50, 60), (2, 0, 1)),  # the contiguous dim moves to the front
        ((64, 12, 64), (1, 0, 2)),  # the last dim stays last: not tiled
    ],
)
def test_tiled_transposes_are_exact(tmp_path, shape, perm):
    program = transposed(tmp_path, shape, perm)
    w = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    got = np.asarray(program.run({"w": w}).outputs["t"])
    np.testing.assert_array_equal(got, np.transpose(w, perm))


def test_bf16_weights_transpose_exactly(tmp_path):
    program = transposed(tmp_path, (300, 200), (1, 0), dtype="bf16")
    w = np.random.default_rng(5).standard_normal((300, 200)).astype(ml_dtypes.bfloat16)
    got = np.asarray(program.run({"w": w}).outputs["t"])
    np.testing.assert_array_equal(got.view(np.uint16), w.T.view(np.uint16))


@pytest.mark.parametrize("tile", [0, 1, 7])
def test_any_block_size_gives_the_same_transpose(tmp_path, monkeypatch, tile):
    program = transposed(tmp_path, (129, 66), (1, 0), tile=tile, monkeypatch=monkeypatch)
    w = np.random.default_rng(tile).standard_normal((129, 66)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(program.run({"w": w}).outputs["t"]), w.T)
