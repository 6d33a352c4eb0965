"""Contractions compiled with register micro-kernels
(pdg-register-tile-contractions) against NumPy in float64: full tiles,
rows and columns left over, and shapes too small for any tile. Both kinds
of kernel run: the per-point matrix-vector product (8 vectors of one row)
and the contraction over every point (4 x 16 tiles)."""

from __future__ import annotations

import numpy as np
import pdg.runtime
import pytest
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from sample_programs import contraction_program


@pytest.mark.parametrize(
    "k, n",
    [
        (64, 128),  # whole tiles only
        (63, 90),  # 3 rows and 10 columns left over (26 for the row kernel)
        (5, 7),  # one row tile, no column tile
    ],
)
def test_contractions_match_numpy(tmp_path, k, n):
    path = tmp_path / "contraction.pdgx"
    compile_module(parse_text(contraction_program(k, n), "c", make_context()), path, gpu=False)
    rng = np.random.default_rng(k * n)
    batch = 29
    x = rng.standard_normal((batch, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    got = pdg.runtime.load(path).run({"x": x, "w": w}, {"B": batch}).outputs
    y = x.astype(np.float64) @ w.astype(np.float64)
    g = x.T.astype(np.float64) @ y
    # float32 sums of k (then batch) products: relative to the sizes summed.
    np.testing.assert_allclose(got["y"], y, rtol=1e-5, atol=1e-5 * np.abs(y).max())
    np.testing.assert_allclose(got["g"], g, rtol=1e-5, atol=1e-5 * np.abs(g).max())
