"""pdg.udf: host callbacks called per point (programs/udf.mlir)."""

from __future__ import annotations

import numpy as np
import pytest
from pdg.interpreter import InterpreterError

from .helpers import run


def _x(batch: int = 3) -> np.ndarray:
    return np.arange(batch * 5 * 2, dtype=np.float32).reshape(batch, 5, 2)


def test_udf_called_per_point_with_accessed_arrays():
    calls = []

    def score(prefix: np.ndarray) -> float:
        calls.append(prefix.shape)
        assert not prefix.flags.writeable  # the interpreter's arrays are read-only
        return float(prefix.sum())  # a Python float: converted to f32

    x = _x()
    r = run("udf", {"x": x}, symbols={"B": 3}, udfs={"score": score})
    expected = np.cumsum(x.sum(axis=2), axis=1)
    np.testing.assert_array_equal(r.outputs["score"], expected)
    np.testing.assert_array_equal(r.outputs["twice"], 2 * expected)
    assert r.outputs["score"].dtype == np.float32
    assert sorted(calls) == sorted([(t + 1, 2) for t in range(5)] * 3)
    assert r.stats["score"] == 15


def test_udf_result_is_checked():
    with pytest.raises(InterpreterError, match=r"udf 'score'.*shape \(2,\)"):
        run("udf", {"x": _x()}, symbols={"B": 3}, udfs={"score": lambda p: p[0]})
    with pytest.raises(InterpreterError, match=r"udf 'score' returned dtype complex128"):
        run("udf", {"x": _x()}, symbols={"B": 3}, udfs={"score": lambda p: 1j})
