"""Compiled udfs: the library calls host callbacks through the table the
runtime fills. Results equal the interpreter's; a missing, unknown, failing
or ill-typed udf is refused with the udf's name, the value it computes and
the point, and a failure ends a dynamic loop early."""

from __future__ import annotations

import numpy as np
import pdg.runtime
import pytest
from conftest import REPO_ROOT
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_file, parse_text
from pdg.lowering.artifact import compile_module
from pdg.runtime import RunError

SCORED = REPO_ROOT / "test" / "python" / "interpreter" / "programs" / "udf.mlir"

# x grows by 1.5 per step from x0; a host callback decides when to stop.
LIMITED = """
pdg.graph @limited {
  pdg.dim @b < launch B max 4
  pdg.dim @t < dynamic T max 30 until %stop : !pdg.value<[b, t], tensor<i1>>
  %x0 = pdg.input "x0" : !pdg.value<[b], tensor<f32>>
  %x = pdg.node "x" [b, t] -> tensor<f32>
    case (t == 0) (%a = %x0[b] : !pdg.value<[b], tensor<f32>>) {
      pdg.yield %a : tensor<f32>
    }
    case (t >= 1) (%p = %x[b, t - 1] : !pdg.value<[b, t], tensor<f32>>) {
      %c = arith.constant dense<1.5> : tensor<f32>
      %s = arith.addf %p, %c : tensor<f32>
      pdg.yield %s : tensor<f32>
    }
  %stop = pdg.udf "at_limit" [b, t] (%x[b, t] : !pdg.value<[b, t], tensor<f32>>) -> tensor<i1>
  pdg.output "x" %x : !pdg.value<[b, t], tensor<f32>>
}
"""


def _x(batch: int = 3) -> np.ndarray:
    return np.arange(batch * 5 * 2, dtype=np.float32).reshape(batch, 5, 2)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    path = tmp_path_factory.mktemp("udf") / "scored.pdgx"
    compile_module(parse_file(str(SCORED), make_context()), path)
    return pdg.runtime.load(path)


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    path = tmp_path_factory.mktemp("udf") / "limited.pdgx"
    compile_module(parse_text(LIMITED, "limited", make_context()), path)
    return pdg.runtime.load(path)


def test_01_compiled_udf_results_equal_the_interpreter(scored):
    calls = []

    def score(prefix):
        calls.append(prefix.shape)
        assert not prefix.flags.writeable
        return float(prefix.sum())

    x = _x()
    got = scored.run({"x": x}, {"B": 3}, {"score": score})
    ref = interpret(SCORED, {"x": x}, symbols={"B": 3}, udfs={"score": score})
    expected = np.cumsum(x.sum(axis=2), axis=1)
    for name in ("score", "twice"):
        np.testing.assert_array_equal(got.outputs[name], ref.outputs[name])
    np.testing.assert_array_equal(got.outputs["score"], expected)
    assert sorted(calls) == sorted([(t + 1, 2) for t in range(5)] * 3 * 2)


def test_02_a_udf_ends_sequences(limited):
    x0 = np.array([0.0, 9.0, -20.0], np.float32)

    def at_limit(v):
        return v >= 10.0

    got = limited.run({"x0": x0}, {"B": 3}, {"at_limit": at_limit})
    ref = interpret(
        parse_text(LIMITED, "ref", make_context()),
        {"x0": x0},
        symbols={"B": 3},
        udfs={"at_limit": at_limit},
    )
    np.testing.assert_array_equal(got.bounds["T"], ref.bounds["T"])
    assert got.bounds["T"].tolist() == [8, 2, 21]
    for a, b in zip(ref.outputs["x"], got.outputs["x"], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "udfs, message",
    [
        ({}, "missing udf(s) score; this program's udfs: score"),
        ({"score": len, "other": len}, "unknown udf(s) other"),
        ({"score": 3}, "udf(s) score must be callables"),
        ({"score": lambda p: p[0]}, "udf 'score' returned shape [2], its result has shape []"),
        ({"score": lambda p: 1j}, "udf 'score' returned dtype complex128"),
    ],
)
def test_03_bad_udfs_are_refused(scored, udfs, message):
    with pytest.raises(RunError) as e:
        scored.run({"x": _x()}, {"B": 3}, udfs)
    assert message in str(e.value)


def test_04_a_raising_udf_stops_the_run_and_is_reported(limited):
    calls = []

    def at_limit(v):
        calls.append(float(v))
        if len(calls) == 5:
            raise ValueError("reward server down")
        return False

    with pytest.raises(RunError) as e:
        limited.run({"x0": np.zeros(2, np.float32)}, {"B": 2}, {"at_limit": at_limit})
    message = str(e.value)
    assert "udf 'at_limit' raised ValueError: reward server down" in message
    assert "computing 'at_limit' at b=0, t=2" in message
    assert isinstance(e.value.__cause__, ValueError)
    # The loop ended after the failing step: far fewer than 2 x 30 calls.
    assert len(calls) == 5
    # The program still runs afterwards (the table and flag are reset).
    ok = limited.run({"x0": np.zeros(1, np.float32)}, {"B": 1}, {"at_limit": lambda v: True})
    assert ok.bounds["T"].tolist() == [1]


def test_05_progress_reports_the_step_while_the_run_goes_on(limited):
    import time

    seen = []

    def slow_limit(v):
        time.sleep(0.03)
        return v >= 30.0

    got = limited.run(
        {"x0": np.zeros(1, np.float32)}, {"B": 1}, {"at_limit": slow_limit}, progress=seen.append
    )
    assert got.bounds["T"].tolist() == [21]
    assert seen and seen == sorted(seen) and 0 <= seen[0] and seen[-1] <= 20


def test_06_any_graph_name_compiles(tmp_path):
    """Graph names may hold any character (found by the fuzzer): symbols
    are quoted in MLIR and made C identifiers for the support code."""
    text = LIMITED.replace("pdg.graph @limited", 'pdg.graph @"odd name[1]"')
    path = tmp_path / "odd.pdgx"
    compile_module(parse_text(text, "odd", make_context()), path)
    program = pdg.runtime.load(path)
    assert program.manifest["abi"]["entry"] == "pdg_odd_name_1_"
    got = program.run({"x0": np.zeros(1, np.float32)}, {"B": 1}, {"at_limit": lambda v: v >= 3})
    assert got.bounds["T"].tolist() == [3]
