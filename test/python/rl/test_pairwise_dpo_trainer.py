"""rl.PairwiseDPOTrainer: preference pairs as the DPO update's sequences, and many
updates in one call of the compiled update. Its first loss, where the
policy is the reference, is log 2 for every pair; repeated on the same
pairs, the loss falls."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pdg import rl
from pdg.losses import DPOAlgorithm
from pdg.nn import GPTConfig

TASK = rl.Addition(10)
TOK = TASK.tokenizer


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    config = GPTConfig(
        vocab=TOK.vocab, d_model=16, n_layers=1, n_heads=2, max_positions=TASK.prompt_width + 3
    )
    return rl.PairwiseDPOTrainer(
        config,
        DPOAlgorithm(beta=0.5),
        TOK,
        TASK.prompt_width,
        TASK.answer_width,
        lr=1e-2,
        workdir=tmp_path_factory.mktemp("dpo"),
    )


def test_pairs_become_masked_sequences(trainer):
    seqs = trainer.sequences([[("1+2=", "3", "4"), ("12=", "12", "1")]])
    assert seqs["tokens"].shape == (2, 1, 2, trainer.length)
    chosen = seqs["targets"][1, 0, 0][seqs["mask"][1, 0, 0] > 0]
    assert [int(x) for x in chosen] == TOK.encode("12") + [TOK.eos]
    rejected = seqs["targets"][0, 0, 1][seqs["mask"][0, 0, 1] > 0]
    assert [int(x) for x in rejected] == TOK.encode("4") + [TOK.eos]
    # fed: the prompt, then the completion but its last token
    assert [int(x) for x in seqs["tokens"][0, 0, 0, :4]] == TOK.encode("1+2=")
    with pytest.raises(ValueError, match="max_new_tokens is 3"):
        trainer.sequences([[("1+2=", "333", "4")]])
    with pytest.raises(ValueError, match="same"):
        trainer.sequences([[("1+2=", "3", "4")], []])


def test_updates_in_one_call_lower_the_loss(trainer):
    weights = trainer.update.policy.init_weights(seed=0, scale=0.3)
    state = trainer.start(weights)
    rng = np.random.default_rng(0)
    pairs = [(p, a, str((int(a) + 1) % 10)) for p, a in TASK.problems(rng, 6)]
    new, losses = trainer.run(state, [pairs] * 8)
    assert losses.shape == (8,)
    np.testing.assert_allclose(losses[0], math.log(2), rtol=1e-6)  # policy == reference
    assert losses[-1] < losses[0] - 0.05
    assert new.step == 8 and new.reference is state.reference
    assert any(not np.array_equal(new.weights[k], weights[k]) for k in weights)
    # A second call continues from the state (the policy it reached).
    _, more = trainer.run(new, [pairs])
    assert more[0] < losses[0]
