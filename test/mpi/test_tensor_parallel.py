"""Tensor-parallel decode on two ranks (run by tools/test.sh under
`mpiexec -n 2`): a Llama-shaped model split over the ranks (heads and MLP
units; pdg.nn.tensor_parallel) generates the tokens one process generates
with the whole model, and the same on both ranks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

MPI = pytest.importorskip("mpi4py.MPI")
from rank_zero import compiled_programs  # noqa: E402

comm = MPI.COMM_WORLD
RANKS = comm.Get_size()

PROMPTS = [[5, 7, 1], [2], [9, 3, 3, 8]]


def config():
    from pdg.nn import DecoderConfig

    return DecoderConfig(
        vocab=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64,
        max_positions=32, positions="rotary", norm="rmsnorm", gated_mlp=True,
        activation="silu", qkv_bias=False, o_bias=False, mlp_bias=False,
        tie_embeddings=False,
    )  # fmt: skip


def decode(ranks=None):
    from pdg.programs import build_decode

    return build_decode(config(), eos=None, max_len=12, prompt_width=4, tensor_parallel=ranks)


def weights():
    w = decode().model.init_weights(seed=7, scale=0.2)
    for path in ("wte.w", "lm_head.w"):  # a clear argmax: no near ties to flip
        w[path] = w[path] * 10
    return w


@pytest.fixture(scope="module")
def artifacts():
    builds = {"split": lambda: decode(RANKS).program, "whole": lambda: decode().program}
    with compiled_programs(builds) as paths:
        yield paths


def test_two_ranks_generate_the_tokens_of_one_process(artifacts):
    import pdg.runtime

    w = weights()
    split = decode(RANKS)
    symbols = {"B": len(PROMPTS)}
    mine = pdg.runtime.load(artifacts["split"]).run(
        split.inputs(w, PROMPTS, comm=comm), symbols, comm=comm
    )
    whole = pdg.runtime.load(artifacts["whole"]).run(decode().inputs(w, PROMPTS), symbols)
    everyone = comm.allgather(np.array(mine.outputs["tokens"]))
    np.testing.assert_array_equal(mine.outputs["tokens"], whole.outputs["tokens"])
    np.testing.assert_allclose(mine.outputs["logits"], whole.outputs["logits"], atol=1e-4)
    for other in everyone:
        np.testing.assert_array_equal(other, everyone[0])


ITERATIONS, BATCH, LENGTH = 3, 2, 8


def train(ranks=None):
    from pdg import optim
    from pdg.programs import build_train_lm

    # The vocabulary split too (the head by columns, the loss's log-softmax
    # across the ranks): the whole of what tensor-parallel training adds.
    return build_train_lm(
        config(),
        BATCH,
        LENGTH,
        optim.SGD(lr=0.5, momentum=0.9),
        clip_norm=1.0,
        tensor_parallel=ranks,
        split_vocab=ranks is not None,
    )


@pytest.fixture(scope="module")
def training_artifacts():
    builds = {"split": lambda: train(RANKS).program, "whole": lambda: train().program}
    with compiled_programs(builds) as paths:
        yield paths


def test_two_ranks_train_the_weights_one_process_trains(training_artifacts):
    """SGD steps with momentum and clipping, the gradients crossing the
    ranks by the collectives' derivative rules, heads, MLP units and
    vocabulary split: each rank's updated share, joined, is the whole
    model's update (f32; summation order differs). SGD, not Adam: Adam's
    division by the root of tiny second moments turns f32 rounding into
    1e-3 relative differences for weights whose gradient is near zero (Adam
    is checked in f64 in test_tensor_parallel_training.py)."""
    import pdg.runtime
    from pdg.programs import copy_batches

    tokens, targets = copy_batches(ITERATIONS, BATCH, LENGTH, vocab=64, seed=3)
    w = train().model.init_weights(seed=5, scale=0.2)
    symbols = {"I": ITERATIONS}
    split, whole = train(RANKS), train()
    mine = pdg.runtime.load(training_artifacts["split"]).run(
        split.inputs(w, tokens, targets, comm=comm), symbols, comm=comm
    )
    ref = pdg.runtime.load(training_artifacts["whole"]).run(
        whole.inputs(w, tokens, targets), symbols
    )
    np.testing.assert_allclose(mine.outputs["loss"], ref.outputs["loss"], rtol=1e-5)
    got, got_state = split.final_state(mine.outputs, comm=comm)
    want, want_state = whole.final_state(ref.outputs)
    for path, value in want.items():
        np.testing.assert_allclose(got[path], value, rtol=1e-5, atol=1e-6, err_msg=path)
        np.testing.assert_allclose(
            got_state[path]["momentum"], want_state[path]["momentum"], atol=1e-5, err_msg=path
        )
    assert np.abs(want["h0.attn.q.w"] - w["h0.attn.q.w"]).max() > 1e-3
