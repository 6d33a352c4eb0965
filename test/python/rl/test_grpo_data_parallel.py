"""GRPO as one program, data-parallel (GRPOProgram.data_parallel(): p
split over ranks by pdg-split-over-workers), in the interpreter, which runs
every rank in one process: the same global batch and seed give the samples,
losses and weights one process gives (float64, 1e-9). The compiled run on
two MPI ranks is test/mpi/test_grpo_data_parallel.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")  # test_grpo_program's helpers import it

from pdg import losses, optim  # noqa: E402
from pdg.interpreter import interpret  # noqa: E402
from pdg.passes import PassError  # noqa: E402
from pdg.passes.data_parallel import split_over_workers  # noqa: E402

from rl.test_grpo_program import build, prompts  # noqa: E402


@pytest.mark.parametrize("ranks, microbatch", [(2, 1), (2, 2), (4, 1)])
def test_split_grpo_equals_one_process(ranks, microbatch):
    program = build("f64", optim.Adam(1e-2), microbatch=microbatch)
    weights = program.policy.init_weights(seed=1, scale=0.5)
    batches = prompts(2, 4 * microbatch, seed=4, cut=microbatch > 1)
    inputs = program.inputs(weights, weights, batches, seed=9)
    symbols = program.symbols(inputs)
    one = interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
    split_symbols = {**symbols, "P": symbols["P"] // ranks, "W": ranks}
    split = interpret(
        program.data_parallel(),
        program.shard(inputs, ranks),
        symbols=split_symbols,
        udfs=program.udfs,
    ).outputs
    # The same samples (sampling keyed by the global coordinates), so the
    # same rewards, in the same places: [w, p, i, ...] is [p, i, ...] cut.
    for name in ("reward", "length"):
        got = np.asarray(split[name])
        np.testing.assert_array_equal(got.reshape(np.asarray(one[name]).shape), one[name])
    assert 0 < np.ravel(one["reward"]).sum() < np.ravel(one["reward"]).size
    for name in ("loss", "kl", "entropy", "grad_norm"):
        np.testing.assert_allclose(split[name], one[name], rtol=1e-9, atol=1e-12, err_msg=name)
    final, state = program.training.final_state(split)
    expected, expected_state = program.training.final_state(one)
    for path in final:
        np.testing.assert_allclose(final[path], expected[path], rtol=0, atol=1e-9, err_msg=path)
        for slot, value in state[path].items():
            np.testing.assert_allclose(
                value, expected_state[path][slot], rtol=1e-9, atol=1e-12, err_msg=path
            )
    assert any(not np.array_equal(final[p], weights[p]) for p in final)


def test_shard_needs_an_even_split():
    program = build("f64", optim.Adam(1e-2))
    weights = program.policy.init_weights(seed=1, scale=0.5)
    inputs = program.inputs(weights, weights, prompts(1, 3), seed=9)
    with pytest.raises(ValueError, match="3 points of p .* do not split evenly over 2 ranks"):
        program.shard(inputs, 2)


def test_batch_scaled_rewards_are_refused_with_the_node():
    """scale_rewards='batch' standardizes by the whole batch's std inside
    one node: not a sum the pass can split; it says where and why."""
    program = build("f64", optim.Adam(1e-2), scale_rewards="batch")
    with pytest.raises(PassError, match="reads all of 'p' and does more than add it up"):
        program.data_parallel()


def test_split_names_must_be_identifiers():
    program = build("f64", optim.Adam(1e-2))
    with pytest.raises(PassError, match="not a name"):
        split_over_workers(program.program.build(), "p q")


def test_rloo_splits_too():
    algorithm = losses.RLOOAlgorithm(group=4, beta=0.05)
    program = build("f64", optim.Adam(1e-2), algorithm=algorithm)
    weights = program.policy.init_weights(seed=1, scale=0.5)
    inputs = program.inputs(weights, weights, prompts(1, 4, seed=2), seed=3)
    symbols = program.symbols(inputs)
    one = interpret(program.program.build(), inputs, symbols=symbols, udfs=program.udfs).outputs
    split = interpret(
        program.data_parallel(),
        program.shard(inputs, 2),
        symbols={**symbols, "P": symbols["P"] // 2, "W": 2},
        udfs=program.udfs,
    ).outputs
    final, _ = program.training.final_state(split)
    expected, _ = program.training.final_state(one)
    for path in final:
        np.testing.assert_allclose(final[path], expected[path], rtol=0, atol=1e-9, err_msg=path)
