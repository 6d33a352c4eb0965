"""A compiled run stops cleanly, with every buffer freed and a message that
names what went wrong, where the data or the machine would otherwise crash
it: an index out of range, a symbol too large, a store that cannot grow,
SIGINT, a bad thread count. Results view the compiled buffers (no copy)
and stay valid after later runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from conftest import REPO_ROOT
from pdg.lowering.artifact import compile_module
from pdg.runtime import RunError


def compiled(tmp_path_factory, program: pf.Program):
    path = tmp_path_factory.mktemp(program.name) / f"{program.name}.pdgx"
    compile_module(program.build(), path, gpu=False)
    return path


def lookup_program() -> pf.Program:
    """y[b] = table[ids[b]]: an embedding lookup."""
    prog = pf.Program("lookup")
    b = prog.dim("b", launch="B")
    ids = prog.input("ids", (), "i64", domain=[b])
    table = prog.input("table", (8, 4), "f32")
    prog.output("y", pf.take(table, ids) * 2.0)
    return prog


def runaway_program(width: int, max_steps: int | None) -> pf.Program:
    """x[b, t] = x[b, t - 1] + a[b] until its sum passes 100: with a = 0 (or
    NaN) the sequences never end on their own."""
    prog = pf.Program("runaway")
    b = prog.dim("b", launch="B")
    t = prog.dim("t", dynamic="T", max=max_steps)
    a = prog.input("a", (width,), "f32", domain=[b])
    x = prog.recurrent((width,), "f32", domain=[b, t], name="x")
    x[t == 0] = a
    x[t > 0] = x[t - 1] + a
    t.until(x.sum() > 100.0)
    prog.output("x", x)
    return prog


@pytest.fixture(scope="module")
def lookup(tmp_path_factory):
    return pdg.runtime.load(compiled(tmp_path_factory, lookup_program()))


TABLE = np.arange(32, dtype=np.float32).reshape(8, 4)


def test_01_lookups_in_range_are_right(lookup):
    ids = np.array([7, 0, 3], np.int64)
    out = lookup.run({"ids": ids, "table": TABLE}, {"B": 3}).outputs["y"]
    np.testing.assert_array_equal(out, TABLE[ids] * 2.0)


@pytest.mark.parametrize("bad", [8, -1, 10**12, -(2**63)])
def test_02_an_index_out_of_range_stops_the_run_naming_the_node_and_point(lookup, bad):
    ids = np.array([1, 2, bad, 3], np.int64)
    with pytest.raises(RunError) as e:
        lookup.run({"ids": ids, "table": TABLE}, {"B": 4})
    message = str(e.value)
    assert f"index {bad} is out of range 0..7" in message
    assert "at b=2" in message  # the point whose body read it


def test_03_the_cli_reports_a_bad_index_without_a_crash(tmp_path_factory, tmp_path):
    path = compiled(tmp_path_factory, lookup_program())
    np.savez(tmp_path / "in.npz", ids=np.array([10**12], np.int64), table=TABLE)
    done = subprocess.run(
        [sys.executable, "-m", "pdg.cli.main", "run", str(path), "--symbols", "B=1",
         "--inputs", str(tmp_path / "in.npz")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "index 1000000000000 is out of range 0..7" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "value, message",
    [
        (18446744073709551617, "symbol N = 18446744073709551617 is outside 1..1099511627776"),
        # fits int64, but the stores would not fit any machine
        (10**12, "exceeds this machine's memory"),
    ],
)
def test_04_symbols_too_large_are_refused_before_anything_is_allocated(
    tmp_path_factory, value, message
):
    prog = pf.Program("count")  # y[n] = n: one output per point, no input over n
    n = prog.dim("n", launch="N")
    prog.output("y", prog.coordinate(n).astype("f32") * 2.0)
    program = pdg.runtime.load(compiled(tmp_path_factory, prog))
    assert program.run({}, {"N": 3}).outputs["y"].tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(RunError, match=message):
        program.run({}, {"N": value})


def test_05_results_view_the_compiled_buffers_and_outlive_later_runs(lookup):
    first = lookup.run({"ids": np.array([1, 2], np.int64), "table": TABLE}, {"B": 2})
    y = first.outputs["y"]
    assert not y.flags.owndata  # a view of the buffer the compiled code made
    for k in range(20):  # later runs allocate (and free) their own buffers
        lookup.run({"ids": np.array([k % 8] * 3, np.int64), "table": TABLE}, {"B": 3})
    np.testing.assert_array_equal(y, TABLE[[1, 2]] * 2.0)


@pytest.fixture(scope="module")
def runaway(tmp_path_factory):
    """Points of 16 KiB, no max: 64 MiB are some 4000 steps."""
    return pdg.runtime.load(compiled(tmp_path_factory, runaway_program(4096, None)))


@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_06_a_dynamic_dim_without_max_stops_at_the_memory_limit_naming_the_dim(runaway, fill):
    inputs = {"a": np.full((2, 4096), fill, np.float32)}
    with pytest.raises(RunError) as e:
        runaway.run(inputs, {"B": 2}, memory_limit=64 << 20)
    message = str(e.value)
    assert "could not grow along dynamic dim 't'" in message
    assert f"memory limit of {64 << 20} bytes" in message
    assert "dim 't' has no max" in message


def test_07_the_environments_limit_is_the_same_limit(runaway, monkeypatch):
    monkeypatch.setenv("PDG_MEMORY_LIMIT", "32M")
    with pytest.raises(RunError, match=f"memory limit of {32 << 20} bytes"):
        runaway.run({"a": np.zeros((1, 4096), np.float32)}, {"B": 1})


@pytest.mark.parametrize("text", ["inf", "1e400", "-5M", "lots", "nan"])
def test_08_a_bad_memory_limit_in_the_environment_is_refused(lookup, monkeypatch, text):
    monkeypatch.setenv("PDG_MEMORY_LIMIT", text)
    with pytest.raises(RunError, match="PDG_MEMORY_LIMIT"):
        lookup.run({"ids": np.zeros(1, np.int64), "table": TABLE}, {"B": 1})


def test_09_a_run_admitted_at_its_limit_never_ends_above_it(tmp_path_factory):
    prog = runaway_program(64, 200)
    program = pdg.runtime.load(compiled(tmp_path_factory, prog))
    inputs = {"a": np.zeros((3, 64), np.float32)}  # every sequence runs to the max
    planned, _, _ = program.planned_peak({"B": 3})
    for limit in (planned, planned + (64 << 10)):
        try:
            result = program.run(inputs, {"B": 3}, memory_limit=limit)
        except RunError as e:  # the run needed more than the plan counts
            assert "memory limit" in str(e)
            continue
        assert result.peak_bytes <= limit
        assert result.bounds["T"].tolist() == [200] * 3


@pytest.mark.parametrize("value", ["abc", "-1", "0", "1000", "2.5"])
def test_10_a_bad_thread_count_is_refused(lookup, monkeypatch, value):
    monkeypatch.setenv("PDG_NUM_THREADS", value)
    with pytest.raises(RunError, match=f"PDG_NUM_THREADS='{value}'"):
        lookup.run({"ids": np.zeros(1, np.int64), "table": TABLE}, {"B": 1})


def test_11_a_udf_interrupted_by_the_user_raises_keyboardinterrupt(tmp_path_factory):
    prog = pf.Program("asks")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (), "f32", domain=[b])

    def score(v):
        raise KeyboardInterrupt

    prog.output("y", prog.udf(score, [x], (), "f32", name="score"))
    program = pdg.runtime.load(compiled(tmp_path_factory, prog))

    with pytest.raises(KeyboardInterrupt):
        program.run({"x": np.zeros(2, np.float32)}, {"B": 2}, udfs={"score": score})


INTERRUPTED = """
import sys, time
import numpy as np
import pdg.runtime
program = pdg.runtime.load(sys.argv[1])
progress = (lambda step: None) if sys.argv[2] == "progress" else None
print("started", flush=True)
start = time.monotonic()
try:
    program.run({"a": np.zeros((1, 4), np.float32)}, {"B": 1}, progress=progress)
    print("finished", flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.2f} s", flush=True)
    # the program is usable again
    out = program.run({"a": np.full((1, 4), 50.0, np.float32)}, {"B": 1})
    print("again", out.bounds["T"].tolist(), flush=True)
"""


@pytest.mark.parametrize("mode", ["plain", "progress"])
def test_12_sigint_stops_a_long_run_within_a_step(tmp_path_factory, mode):
    """Ten million steps (minutes); SIGINT ends the run at once, frees it,
    and raises KeyboardInterrupt in the caller."""
    path = compiled(tmp_path_factory, runaway_program(4, 10_000_000))
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(INTERRUPTED), str(path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    assert child.stdout.readline().strip() == "started"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        raise AssertionError("SIGINT did not stop the run") from None
    assert child.returncode == 0, err
    assert "interrupted after" in out and "again [1]" in out, out


def test_13_the_cli_exits_130_on_sigint(tmp_path_factory, tmp_path):
    path = compiled(tmp_path_factory, runaway_program(4, 10_000_000))
    np.savez(tmp_path / "in.npz", a=np.zeros((1, 4), np.float32))
    child = subprocess.Popen(
        [sys.executable, "-m", "pdg.cli.main", "run", str(path), "--symbols", "B=1",
         "--inputs", str(tmp_path / "in.npz")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    time.sleep(3.0)  # importing and loading, then the run
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert "Traceback" not in err


@pytest.mark.parametrize("bad", ["99999", "-1"])
def test_14_the_decode_example_reports_a_token_id_outside_the_vocabulary(bad):
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "decode.py"), "--prompts", f"3 {bad}", "4 5"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"index {bad} is out of range 0..63" in done.stderr
    assert "at b=0, t=1" in done.stderr and "Traceback" not in done.stderr
