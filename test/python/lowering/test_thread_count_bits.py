"""Every thread count gives the same bits: a compiled GRPO training run, and
large ops split into tiles, each run in fresh processes with
PDG_NUM_THREADS = 1, 2, 3 and 4 (the pool reads it once per process) and
compared byte for byte. A checkpoint written on one machine then resumes
identically on another with a different number of cores.

What used to differ: a value read only by its sum over the batch (a
completion's weight gradient) was summed into one partial per thread, so
which completions were added together followed the pool's split of them;
and a large op was cut into one tile per thread, so which elements fell on
a tile's edge (a vectorized loop's scalar remainder: glibc's expf and
libmvec's round some inputs differently) followed it too. Both now depend on
the extents alone (pdg.lowering.partials, pdg-parallelize-large-ops)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pdg.runtime
import pytest
from pdg import optim, rl
from pdg.ir import make_context, parse_text
from pdg.losses import GRPOAlgorithm
from pdg.lowering.artifact import compile_module
from pdg.lowering.toolchain import openblas
from pdg.nn import GPTConfig
from pdg.programs import build_grpo

THREADS = (1, 2, 3, 4)
TESTS = Path(__file__).resolve().parents[1]  # test/python: this module's package root

TASK = rl.Addition(10)
NEW = 3
ITERATIONS = 12
PROMPTS = 3  # x 4 completions: 12 points summed per weight gradient


def parity_reward(prompt_ids, completion_ids) -> float:
    """Varies at random weights, so that advantages (and gradients) are not 0."""
    return float(completion_ids[0] % 2)


def grpo_program():
    """GRPO with a point per completion: each weight's gradient per
    completion is a partial store summed over (p, g)."""
    tok = TASK.tokenizer
    config = GPTConfig(tok.vocab, 8, 1, 2, None, TASK.prompt_width + NEW, dtype="f32")
    return build_grpo(
        config,
        GRPOAlgorithm(group=4, clip=0.2, beta=0.04),
        parity_reward,
        eos=tok.eos,
        prompt_width=TASK.prompt_width,
        max_new_tokens=NEW,
        optimizer=optim.Adam(1e-2),
        layout="completion",
    )


def grpo_inputs(program) -> dict:
    rng = np.random.default_rng(0)
    tok = TASK.tokenizer
    batches = [[tok.encode(p) for p, _ in TASK.problems(rng, PROMPTS)] for _ in range(ITERATIONS)]
    weights = program.policy.init_weights(seed=1, scale=0.5)
    return program.inputs(weights, weights, batches, seed=9)


# Runs the GRPO artifact (its udfs come from grpo_program) and saves every
# output: the rewards, losses, final weights and Adam's state.
GRPO_RUNNER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import pdg.runtime
    tests, artifact, out = sys.argv[1:4]
    sys.path.insert(0, tests)
    from lowering.test_thread_count_bits import grpo_inputs, grpo_program
    program = grpo_program()
    inputs = grpo_inputs(program)
    run = pdg.runtime.load(artifact).run(inputs, program.symbols(inputs), udfs=program.udfs)
    np.savez(out, **{k: np.asarray(v) for k, v in run.outputs.items()})
    """
)

# Runs an artifact without udfs on the inputs of an npz and saves its outputs.
RUNNER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import pdg.runtime
    artifact, feed, out = sys.argv[1:4]
    run = pdg.runtime.load(artifact).run(dict(np.load(feed)), {})
    np.savez(out, **{k: np.asarray(v) for k, v in run.outputs.items()})
    """
)


def run_on(threads: int, script: str, args: list[str], out: Path) -> dict[str, np.ndarray]:
    env = dict(os.environ, PDG_NUM_THREADS=str(threads))
    done = subprocess.run(
        [sys.executable, "-c", script, *args, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with np.load(out) as saved:
        return {k: saved[k] for k in saved.files}


def assert_same_bits(runs: dict[int, dict[str, np.ndarray]]) -> None:
    first = runs[THREADS[0]]
    for n, outputs in runs.items():
        assert outputs.keys() == first.keys()
        differ = [
            k
            for k in first
            if outputs[k].dtype != first[k].dtype
            or outputs[k].shape != first[k].shape
            or outputs[k].tobytes() != first[k].tobytes()
        ]
        assert not differ, f"{n} threads give other bits than 1 for {differ}"


def test_grpo_training_gives_the_same_bits_on_every_thread_count(tmp_path):
    program = grpo_program()
    artifact = tmp_path / "grpo.pdgx"
    compiled = compile_module(program.program.build(), artifact, gpu=False)
    partial = [s for s in compiled.manifest["stores"] if s["kind"] == "partial"]
    assert partial, "no weight gradient is summed from partial sums"
    runs = {
        n: run_on(n, GRPO_RUNNER, [str(TESTS), str(artifact)], tmp_path / f"out-{n}.npz")
        for n in THREADS
    }
    assert_same_bits(runs)
    # Not vacuous: both rewards were drawn (the advantages, and so the
    # gradients, are not all 0) and every iteration moved the weights.
    out = runs[1]
    assert 0 < out["reward"].sum() < out["reward"].size
    start = program.policy.init_weights(seed=1, scale=0.5)  # as in grpo_inputs
    final, _ = program.training.final_state(out)
    still = [path for path in final if np.array_equal(final[path], start[path])]
    # attn.k.b's gradient is 0 but for rounding (softmax ignores a score
    # added to every key): it may stay.
    assert all(path.endswith("attn.k.b") for path in still), still


def test_ops_split_into_tiles_give_the_same_bits_on_every_thread_count(tmp_path):
    """A node with one point, exp(tanh(x)) over n elements: one large op,
    split into tiles run by the pool, each a vectorized loop whose scalar
    remainder calls glibc's expf and tanhf where the vector body calls
    libmvec's. Where the tiles end must not depend on the thread count."""
    n = 100_003  # not a multiple of a vector, of a tile, or of any thread count
    text = f"""
    !x = !pdg.value<[], tensor<{n}xf32>>
    pdg.graph @tiles {{
      %x = pdg.input "x" : !x
      %y = pdg.node "y" [] (%a = %x[] : !x) -> tensor<{n}xf32> {{
        %t = math.tanh %a : tensor<{n}xf32>
        %e = math.exp %t : tensor<{n}xf32>
        pdg.yield %e : tensor<{n}xf32>
      }}
      pdg.output "y" %y : !x
    }}
    """
    artifact = tmp_path / "tiles.pdgx"
    compile_module(parse_text(text, "tiles", make_context()), artifact, gpu=False)
    x = (3 * np.random.default_rng(0).standard_normal(n)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    runs = {
        t: run_on(t, RUNNER, [str(artifact), str(tmp_path / "x.npz")], tmp_path / f"y-{t}.npz")
        for t in THREADS
    }
    assert_same_bits(runs)
    np.testing.assert_allclose(runs[1]["y"], np.exp(np.tanh(x)), rtol=1e-6)


def test_products_through_sgemm_give_the_same_bits_on_every_thread_count(tmp_path):
    """A node with one point, a 40 x 300 by 300 x 1000 product: split into
    tiles of 64 columns (pdg-parallelize-large-ops), each an sgemm call on
    the calling thread (pdg-call-blas). The calls, and so how OpenBLAS
    blocks each sum, must not depend on the thread count."""
    if openblas() is None:
        pytest.skip("scipy-openblas32 not installed")
    m, k, n = 40, 300, 1000
    text = f"""
    !a = !pdg.value<[], tensor<{m}x{k}xf32>>
    !b = !pdg.value<[], tensor<{k}x{n}xf32>>
    !c = !pdg.value<[], tensor<{m}x{n}xf32>>
    pdg.graph @product {{
      %a = pdg.input "a" : !a
      %b = pdg.input "b" : !b
      %c = pdg.node "c" [] (%x = %a[] : !a, %y = %b[] : !b) -> tensor<{m}x{n}xf32> {{
        %z = arith.constant 0.0 : f32
        %e = tensor.empty() : tensor<{m}x{n}xf32>
        %f = linalg.fill ins(%z : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
        %r = linalg.matmul ins(%x, %y : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>)
                           outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
        pdg.yield %r : tensor<{m}x{n}xf32>
      }}
      pdg.output "c" %c : !c
    }}
    """
    artifact = tmp_path / "product.pdgx"
    compile_module(parse_text(text, "product", make_context()), artifact, gpu=False)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    np.savez(tmp_path / "ab.npz", a=a, b=b)
    runs = {
        t: run_on(t, RUNNER, [str(artifact), str(tmp_path / "ab.npz")], tmp_path / f"c-{t}.npz")
        for t in THREADS
    }
    assert_same_bits(runs)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(runs[1]["c"], expected, rtol=1e-5, atol=1e-4)
    # Not vacuous: the product went through sgemm.
    program = pdg.runtime.load(artifact)
    program.run({"a": a, "b": b}, {})
    assert ctypes.c_int64.in_dll(program._entry.library, "pdg_blas_calls").value > 0
