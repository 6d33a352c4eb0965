"""Tensor parallelism (pdg.nn.tensor_parallel): a decoder whose heads and
MLP units are split over a worker dim decodes what the whole model
decodes. The interpreter runs every rank in one process; the compiled run
on two MPI ranks is test/mpi/test_tensor_parallel.py."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pytest
from pdg.interpreter import interpret
from pdg.nn import DecoderConfig, Shards
from pdg.programs import build_decode

LLAMA = dict(
    positions="rotary",
    norm="rmsnorm",
    gated_mlp=True,
    activation="silu",
    qkv_bias=True,  # Qwen2's: the split biases are cut too
    o_bias=False,
    mlp_bias=False,
    tie_embeddings=False,
)


def config(family: str, **over) -> DecoderConfig:
    base = dict(vocab=40, d_model=32, n_layers=2, n_heads=4, max_positions=24, dtype="f64")
    if family == "llama":
        base.update(LLAMA, n_kv_heads=2, d_ff=48)
    base.update(over)
    return DecoderConfig(**base)


def clear_weights(prog, seed: int) -> dict:
    """Random weights with the embeddings scaled up, so that greedy choices
    are not near ties that rounding could flip."""
    weights = prog.model.init_weights(seed=seed, scale=0.2)
    for path in weights:
        if path in ("wte.w", "lm_head.w"):
            weights[path] = weights[path] * 10
    return weights


def decode(prog, weights, prompts, ranks=None):
    inputs = prog.inputs(weights, prompts)
    symbols = {"B": len(prompts)}
    if ranks:
        symbols["W"] = ranks
    return interpret(prog.program.build(), inputs, symbols=symbols).outputs


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_two_ranks_decode_what_the_whole_model_decodes(family):
    cfg = config(family)
    whole = build_decode(cfg, eos=None, max_len=10, prompt_width=4)
    split = build_decode(cfg, eos=None, max_len=10, prompt_width=4, tensor_parallel=2)
    weights = clear_weights(whole, seed=3)
    prompts = [[5, 7, 1], [2]]
    want = decode(whole, weights, prompts)
    got = decode(split, weights, prompts, ranks=2)
    np.testing.assert_array_equal(got["tokens"], want["tokens"])
    # f64: only the order of the sums over heads and units differs
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=1e-9, atol=1e-9)
    assert len(set(np.asarray(want["tokens"]).ravel())) > 2  # not one token repeated


def test_the_split_weights_are_inputs_over_the_worker_dim():
    prog = build_decode(config("llama"), eos=None, max_len=8, tensor_parallel=2)
    text = prog.program.to_mlir()
    assert "pdg.dim @w < world W" in text
    # q by columns (4 heads of 8 -> 2 per rank), o and down by rows
    assert '"h0_attn_q_w" : !pdg.value<[w], tensor<32x16xf64>>' in text
    assert '"h0_attn_o_w" : !pdg.value<[w], tensor<16x32xf64>>' in text
    assert '"h0_mlp_down_w" : !pdg.value<[w], tensor<24x32xf64>>' in text
    assert text.count("pdg.all_reduce sum") == 4  # after attention and MLP, 2 layers
    assert '"wte_w" : !pdg.value<[], tensor<40x32xf64>>' in text  # replicated


def test_cut_weights_per_rank_and_for_every_rank():
    prog = build_decode(config("gpt2"), eos=None, max_len=8, tensor_parallel=2)
    weights = prog.model.init_weights(seed=0)
    q = weights["h0.attn.q.w"]
    stacked = prog.model.inputs_from(weights)["h0_attn_q_w"]
    assert stacked.shape == (2, 32, 16)
    np.testing.assert_array_equal(stacked[1], q[:, 16:])

    class Comm:
        def __init__(self, size, rank):
            self.size, self.rank = size, rank

        def Get_size(self):
            return self.size

        def Get_rank(self):
            return self.rank

    mine = prog.inputs(weights, [[1]], comm=Comm(2, 1))
    np.testing.assert_array_equal(mine["h0_attn_q_w"], q[None, :, 16:])
    np.testing.assert_array_equal(mine["h0_mlp_proj_w"], weights["h0.mlp.proj.w"][None, 64:])
    with pytest.raises(
        ValueError, match="splits the model over 2 ranks, but the communicator has 3"
    ):
        prog.inputs(weights, [[1]], comm=Comm(3, 0))


@pytest.mark.parametrize(
    ("over", "ranks", "message"),
    [
        (dict(n_heads=4), 3, "4 query heads do not split evenly over 3 ranks"),
        (dict(n_kv_heads=1, n_heads=4), 2, "1 key/value heads do not split evenly over 2 ranks"),
    ],
)
def test_splits_that_do_not_divide_are_refused(over, ranks, message):
    cfg = config("llama", **over)
    with pytest.raises(pf.ProgramError, match=message):
        build_decode(cfg, eos=None, max_len=8, tensor_parallel=ranks)


def test_shards_need_a_worker_dim():
    prog = pf.Program("p")
    b = prog.dim("b", launch="B")
    with pytest.raises(pf.ProgramError, match="'b' is not one"):
        Shards(b, 2)
