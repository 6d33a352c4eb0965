"""Tensor parallelism in training: build_train_lm(tensor_parallel=n) splits
the heads and MLP units over a worker dim, and its gradients cross the
ranks through the collectives' derivative rules (pdg.autodiff.collectives:
an all-reduce's adjoint is the result's on every rank; a replicated value
read on every rank sums its adjoints with an all-reduce). Two simulated
ranks in the interpreter take the steps the whole model takes. The
compiled run on two MPI ranks is test/mpi/test_tensor_parallel.py."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pytest
from pdg import optim
from pdg.interpreter import interpret
from pdg.programs import build_train_lm, copy_batches

from .test_tensor_parallel import config

ITERATIONS, BATCH, LENGTH = 3, 2, 6


def train(prog, weights, ranks=None):
    tokens, targets = copy_batches(ITERATIONS, BATCH, LENGTH, vocab=40, seed=1)
    symbols = {"I": ITERATIONS}
    if ranks:
        symbols["W"] = ranks
    inputs = prog.inputs(weights, tokens, targets)
    out = interpret(prog.program.build(), inputs, symbols=symbols).outputs
    return out, *prog.final_state(out)


@pytest.mark.parametrize(
    ("family", "optimizer", "clip", "vocab"),
    [
        ("gpt2", optim.SGD(lr=0.5), None, False),
        ("llama", optim.Adam(lr=0.01), 0.5, False),
        ("gpt2", optim.SGD(lr=0.5), None, True),  # tied: the table split by rows
        ("llama", optim.Adam(lr=0.01), 0.5, True),  # untied: the head by columns
    ],
)
def test_two_ranks_take_the_steps_of_the_whole_model(family, optimizer, clip, vocab):
    cfg = config(family)
    whole = build_train_lm(cfg, BATCH, LENGTH, optimizer, clip_norm=clip)
    split = build_train_lm(
        cfg, BATCH, LENGTH, optimizer, clip_norm=clip, tensor_parallel=2, split_vocab=vocab
    )
    weights = whole.model.init_weights(seed=2, scale=0.2)
    want, want_w, want_s = train(whole, weights)
    got, got_w, got_s = train(split, weights, ranks=2)
    # f64: only the order of the sums over heads, units and ranks differs
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-9)
    np.testing.assert_allclose(got["grad_norm"], want["grad_norm"], rtol=1e-9)
    for path, w in want_w.items():
        assert got_w[path].shape == w.shape, path
        np.testing.assert_allclose(got_w[path], w, rtol=1e-9, atol=1e-12, err_msg=path)
        for slot, v in want_s[path].items():
            np.testing.assert_allclose(got_s[path][slot], v, rtol=1e-9, atol=1e-12)
    moved = np.abs(want_w["h0.attn.q.w"] - weights["h0.attn.q.w"]).max()
    assert moved > 1e-3  # the steps did something to a split weight


def test_the_split_weights_train_on_their_rank_and_the_rest_all_reduce():
    prog = build_train_lm(config("gpt2"), BATCH, LENGTH, optim.SGD(lr=0.1), tensor_parallel=2)
    text = prog.program.to_mlir()
    # a split weight and its update stay over the worker dim: no collective
    assert '"h0_attn_q_w" : !pdg.value<[w], tensor<32x16xf64>>' in text
    assert "!pdg.value<[i, w], tensor<32x16xf64>>" in text
    # forward: 2 per layer; backward: the replicated inputs of the two
    # column-split products (ln_1's and ln_2's outputs) per layer; the
    # gradient norm: the split weights' squares, once
    assert text.count("pdg.all_reduce sum") == 2 * 2 + 2 * 2 + 1


def test_a_vocabulary_split_keeps_a_share_of_the_table_and_the_head():
    prog = build_train_lm(
        config("llama"), BATCH, LENGTH, optim.SGD(lr=0.1), tensor_parallel=2, split_vocab=True
    )
    text = prog.program.to_mlir()
    assert '"wte_w" : !pdg.value<[w], tensor<20x32xf64>>' in text
    assert '"lm_head_w" : !pdg.value<[w], tensor<32x20xf64>>' in text
    assert "pdg.all_reduce max" in text  # the log-softmax's shift, across the ranks
    with pytest.raises(pf.ProgramError, match="split_vocab splits over ranks"):
        build_train_lm(config("gpt2"), BATCH, LENGTH, optim.SGD(lr=0.1), split_vocab=True)
