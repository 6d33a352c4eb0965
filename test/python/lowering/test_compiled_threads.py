"""Compiled programs on several threads: the driver's parallel loops over
points, large ops split into tiles (pdg-parallelize-large-ops), per-thread
scratch for wrapped windows, and the pool after fork().

The pool reads PDG_NUM_THREADS once per process, so each thread count runs
the artifact in a fresh Python process. Every count must give the same bits:
a point, or a tile's row, is computed by the same code whichever thread
runs it (a whole training run: test_thread_count_bits.py)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from decode_programs import small_decode
from pdg.interpreter import interpret
from pdg.ir import make_context, parse_text
from pdg.lowering.artifact import compile_module
from sample_programs import contraction_program

# Runs an artifact on the inputs of an npz and pickles its outputs (ragged
# ones are lists of arrays); with "fork", runs again in a child made by fork() (its pool must
# start anew) and writes the child's outputs instead.
RUNNER = textwrap.dedent(
    """
    import os, pickle, signal, sys
    import numpy as np
    import pdg.runtime
    artifact, inputs, symbols, out, fork = sys.argv[1:6]
    program = pdg.runtime.load(artifact)
    feed = dict(np.load(inputs))
    symbols = {k: int(v) for k, v in (s.split("=") for s in symbols.split(","))}
    outputs = program.run(feed, symbols).outputs
    if fork == "fork":
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)  # a child stuck waiting for the parent's workers fails
            outputs = program.run(feed, symbols).outputs
            with open(out, "wb") as f:
                pickle.dump(outputs, f)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
    with open(out, "wb") as f:
        pickle.dump(outputs, f)
    """
)


def run_with_threads(tmp_path, artifact, inputs: dict, symbols: dict, threads, fork=False):
    """The outputs of `artifact` run in a fresh process with PDG_NUM_THREADS
    = `threads` (None: the default, one per CPU)."""
    feed = tmp_path / "inputs.npz"
    np.savez(feed, **inputs)
    out = tmp_path / f"out-{threads}-{fork}.pickle"
    env = dict(os.environ)
    env.pop("PDG_NUM_THREADS", None)
    if threads is not None:
        env["PDG_NUM_THREADS"] = str(threads)
    symbol_text = ",".join(f"{k}={v}" for k, v in symbols.items())
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(artifact), str(feed), symbol_text, str(out)]
        + ["fork" if fork else "no"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with open(out, "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="module")
def threads_program(tmp_path_factory):
    path = tmp_path_factory.mktemp("threads") / "threads.pdgx"
    compile_module(
        parse_text(contraction_program(64, 96), "threads", make_context()), path, gpu=False
    )
    return path


def test_parallel_points_and_split_contraction_match_numpy(threads_program, tmp_path):
    rng = np.random.default_rng(0)
    batch = 37  # not a multiple of any thread count
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    w = rng.standard_normal((64, 96)).astype(np.float32)
    inputs = {"x": x, "w": w}
    runs = {
        n: run_with_threads(tmp_path, threads_program, inputs, {"B": batch}, n) for n in (1, 2, 3)
    }
    y = x.astype(np.float64) @ w
    np.testing.assert_allclose(runs[1]["y"], y, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(runs[1]["g"], x.T.astype(np.float64) @ y, rtol=1e-5, atol=1e-3)
    for n in (2, 3):
        for name in ("y", "g"):
            assert np.array_equal(runs[n][name], runs[1][name]), (n, name)


def test_points_and_the_contraction_are_outlined_for_the_pool(threads_program):
    """In the library: the entry's loop over b (first moved into a function
    of its own, pdg-outline-driver-loops) and the contraction's tiles
    are outlined functions (`..omp_par`) that the pool runs; y's body, run
    inside the loop over b, is not split again. The OpenMP ABI the pool
    implements stays inside the library."""
    symbols = subprocess.run(
        ["nm", str(threads_program / "program.so")], capture_output=True, text=True, check=True
    ).stdout.split()
    outlined = {name for name in symbols if name.endswith("..omp_par")}
    assert outlined == {"parallel_0_of_pdg_threads..omp_par", "threads_g_0_into..omp_par"}
    exported = subprocess.run(
        ["nm", "-D", "--defined-only", str(threads_program / "program.so")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "pdg_thread_slots" in exported
    assert "__kmpc_fork_call" not in exported
    assert "parallel_0_of_pdg_threads" not in exported  # internal, as the bodies are


def test_a_forked_child_starts_its_own_pool(threads_program, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, 64)).astype(np.float32)
    w = rng.standard_normal((64, 96)).astype(np.float32)
    inputs = {"x": x, "w": w}
    parent = run_with_threads(tmp_path, threads_program, inputs, {"B": 9}, 2)
    child = run_with_threads(tmp_path, threads_program, inputs, {"B": 9}, 2, fork=True)
    for name in ("y", "g"):
        assert np.array_equal(child[name], parent[name])


def test_wrapped_windows_use_one_scratch_per_thread(tmp_path):
    """A window of 3 over 24 steps wraps its circular store at most steps;
    five sequences on 1, 2 and 4 threads copy their wrapped windows at the
    same time. Tokens match the interpreter's on every count."""
    d = small_decode("window:3", max_len=24, eos=-1, prompt_width=2)
    module = d.program.build()
    path = tmp_path / "decode.pdgx"
    compile_module(parse_text(str(module), "decode", make_context()), path, gpu=False)
    prompts = [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]
    inputs = d.inputs(d.model.init_weights(seed=3, scale=0.5), prompts)
    symbols = {"B": len(prompts)}
    expected = interpret(parse_text(str(module), "decode", make_context()), inputs, symbols)
    want = expected.outputs["tokens"]
    for n in (1, 2, 4):
        got = run_with_threads(tmp_path, path, inputs, symbols, n)["tokens"]
        assert len(got) == len(want) == len(prompts)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
