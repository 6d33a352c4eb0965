"""rl.PPOTrainer: sampling, the critic's values at the rollout, and several
epochs of PPO updates over the same batch in one call of the compiled
update (the epochs are its iterations)."""

from __future__ import annotations

import numpy as np
import pytest
from pdg import rl
from pdg.losses import PPOConfig
from pdg.nn import GPTConfig
from pdg.rl.ppo_trainer import token_rewards
from pdg.rl.trainer import Rollout

torch = pytest.importorskip("torch")

from frontend.torch_reference import TorchGPT  # noqa: E402

EPOCHS = 3


def test_token_rewards_shape_the_kl_and_end_on_the_reward():
    mask = np.array([[[0, 1, 1, 0], [0, 0, 1, 1]]], np.float32)  # [p, g, t]
    logp = np.array([[[9, -1.0, -2.0, 9], [9, 9, -0.5, -1.5]]], np.float32)
    ref = np.array([[[7, -1.5, -1.0, 7], [7, 7, -0.5, -1.0]]], np.float32)
    rollout = Rollout(
        tokens=np.zeros(mask.shape, np.int64),
        targets=np.zeros(mask.shape, np.int64),
        mask=mask,
        old_logp=logp,
        ref_logp=ref,
        rewards=np.array([[1.0, 0.25]], np.float32),
        lengths=np.array([[2, 2]]),
    )
    shaped = token_rewards(rollout, kl_coef=0.1)
    expected = np.array([[[0, -0.05, 0.1 + 1.0, 0], [0, 0, 0, 0.05 + 0.25]]])
    np.testing.assert_allclose(shaped, expected, atol=1e-6)


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    task = rl.Addition(10)
    tok = task.tokenizer
    config = GPTConfig(
        vocab=tok.vocab, d_model=16, n_layers=1, n_heads=2, max_positions=task.prompt_width + 3
    )
    return task, rl.PPOTrainer(
        config,
        PPOConfig(group=2),
        lambda prompt, completion: 1.0 / (1 + len(completion)),  # varies at random weights
        tok,
        task.prompt_width,
        task.answer_width,
        epochs=EPOCHS,
        lr=1e-2,
        workdir=tmp_path_factory.mktemp("ppo"),
    )


def test_an_iteration_runs_several_epochs_on_one_batch(trainer):
    task, trainer = trainer
    weights = trainer.update.policy.init_weights(seed=0, scale=0.3)
    state = trainer.start(weights)
    assert not state.weights["critic_value.w"].any()  # the value head starts at 0
    prompts = [p for p, _ in task.problems(np.random.default_rng(0), 4)]
    new, stats = trainer.step(state, prompts)
    # One loss per epoch; the first has ratio 1 and values 0, the later
    # ones see the weights the earlier epochs moved.
    assert len(trainer.epoch_losses) == EPOCHS
    assert all(np.isfinite(trainer.epoch_losses))
    assert len(set(trainer.epoch_losses)) == EPOCHS
    assert stats.loss == trainer.epoch_losses[-1]
    assert 1 <= stats.length <= task.answer_width and 0 < stats.reward <= 0.5
    assert abs(stats.kl) < 1e-6  # the reference is the policy at sampling
    for path in ("wte.w", "critic.wte.w", "critic_value.w", "critic_value.b"):
        assert not np.array_equal(new.weights[path], state.weights[path]), path
    assert new.reference is state.reference and new.step == 1
    assert set(new.optimizer) == set(trainer.update.paths)


def test_the_values_program_is_the_critic(trainer):
    """The values the update reads at the rollout: the critic's last hidden
    state through its head, as an independent PyTorch model computes them."""
    task, trainer = trainer
    weights = trainer.update.policy.init_weights(seed=1, scale=0.3)
    state = trainer.start(weights)
    rng = np.random.default_rng(2)
    state.weights["critic_value.w"] = rng.normal(size=16).astype(np.float32)
    state.weights["critic_value.b"] = np.float32(0.5)
    tokens = rng.integers(0, task.tokenizer.vocab, size=(3, 2, trainer.length))
    out = trainer.run_values.run(trainer.values.inputs(state.weights, tokens), {"P": 3})
    critic = TorchGPT({k: np.float64(v) for k, v in weights.items()}, 1, 2)
    head = torch.tensor(state.weights["critic_value.w"], dtype=torch.float64)
    for p in range(3):
        for g in range(2):
            want = critic.hidden(list(tokens[p, g]), "full", 0) @ head + 0.5
            np.testing.assert_allclose(out.outputs["value"][p, g], want.numpy(), atol=1e-4)
