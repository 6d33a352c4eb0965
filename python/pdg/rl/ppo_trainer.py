"""PPO with a critic, from compiled programs: each iteration samples
completions (the decode program, with the policy's and the reference's
log-probs of each chosen token), scores them with a Python callable, takes
the critic's values at the rollout (the values program), and runs
`epochs` updates of the policy and the critic over that same batch in one
call of the compiled update (programs.build_rl_step with PPO: GAE, the
clipped surrogate and the clipped value loss). The epochs are the update
program's iterations i: the batch is repeated along i, the weights and
Adam's state flow from one epoch to the next, and from the second epoch on
the ratio to the sampling policy moves away from 1.

    trainer = PPOTrainer(config, PPOConfig(group=4), task.reward, tokenizer,
                         prompt_width=6, max_new_tokens=3, epochs=4)
    state = trainer.start(sft_weights)   # reference = sft_weights; critic from them too
    state, stats = trainer.step(state, prompts)

Per-token rewards (PPO's usual shaping for language models): each
completion token is penalized by kl_coef * (logp - ref_logp), its sampled
log-ratio to the reference, and the completion's reward is added at its
last token.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pdg import optim
from pdg.losses import PPOConfig
from pdg.lowering.cache import build_artifact
from pdg.nn import DecoderConfig
from pdg.programs import build_rl_step, build_values
from pdg.runtime import load

from .trainer import GreedyEvaluator, Rollout, StepStats, TrainerState, build_sampler, sample


class PPOTrainer:
    def __init__(
        self,
        config: DecoderConfig,
        ppo: PPOConfig,
        reward: Callable[[str, str], float],
        tokenizer,
        prompt_width: int,
        max_new_tokens: int,
        epochs: int = 4,
        kl_coef: float = 0.04,
        lr: float = 1e-3,
        clip_norm: float | None = 1.0,
        workdir: Path | None = None,
        max_batch: int = 1024,
        cache: Path | None = None,
    ):
        if not isinstance(ppo, PPOConfig):
            raise TypeError("PPOTrainer runs PPO: pass pdg.losses.PPOConfig")
        if epochs < 1 or kl_coef < 0:
            raise ValueError(f"need epochs >= 1 and kl_coef >= 0, got {epochs} and {kl_coef}")
        self.config, self.ppo, self.reward, self.tok = config, ppo, reward, tokenizer
        self.epochs, self.kl_coef = epochs, kl_coef
        self.epoch_losses: list[float] = []  # the last step()'s loss at each epoch
        self.length = prompt_width + max_new_tokens  # positions of prompt + completion
        self.new = max_new_tokens
        work = Path(workdir or tempfile.mkdtemp(prefix="pdg-ppo-"))
        self.sampler = build_sampler(config, tokenizer, self.length, prompt_width, ppo, max_batch)
        self.values = build_values(config, self.length, ppo.group)
        self.update = build_rl_step(config, self.length, ppo, optim.Adam(lr), clip_norm)
        self.greedy = GreedyEvaluator(
            config, reward, tokenizer, prompt_width, max_new_tokens, work, max_batch, cache
        )
        self.compile_seconds = {"greedy": self.greedy.compile_seconds}
        loaded = {}
        for name, prog in (
            ("sample", self.sampler.program),
            ("values", self.values.program),
            ("ppo_update", self.update.program),
        ):
            built = build_artifact(prog, name, work, cache)
            self.compile_seconds[name] = built.seconds
            loaded[name] = load(built.path)
        self.run_sample, self.run_values = loaded["sample"], loaded["values"]
        self.run_update = loaded["ppo_update"]

    def start(self, weights: dict) -> TrainerState:
        """Training from the policy `weights`, which are also the frozen
        reference and the critic's body (its value head starts at 0)."""
        critic = {f"critic.{path}": np.array(w) for path, w in weights.items()}
        head = np.zeros(self.config.d_model, np.asarray(weights["wte.w"]).dtype)
        critic["critic_value.w"], critic["critic_value.b"] = head, np.zeros((), head.dtype)
        return TrainerState({**weights, **critic}, dict(weights))

    def complete(self, weights, prompts: list[str], seed: int, reference: dict):
        """Sampled completions and their tokens' log-probs (see sample())."""
        return sample(
            self.sampler, self.run_sample, self.tok, weights, prompts, seed, reference, self.new
        )

    def step(self, state: TrainerState, prompts: list[str]) -> tuple[TrainerState, StepStats]:
        """One PPO iteration on `prompts` (group completions of each):
        sampling, the critic's values, then `epochs` updates."""
        start = time.perf_counter()
        rollout = Rollout.sample(self, state, prompts, self.ppo.group)
        generated = time.perf_counter() - start
        symbols = {"P": len(prompts)}
        values = self.run_values.run(self.values.inputs(state.weights, rollout.tokens), symbols)
        old_values = np.asarray(values.outputs["value"], rollout.mask.dtype)
        inputs = self.update.training.initial_inputs(
            state.weights, state.optimizer, start_step=state.step * self.epochs
        )
        batch = {
            "tokens": rollout.tokens,
            "targets": rollout.targets,
            "mask": rollout.mask,
            "old_logp": rollout.old_logp,
            "old_values": old_values,
            "token_rewards": token_rewards(rollout, self.kl_coef),
        }
        # [p, i, g, t]: the same batch at every epoch i
        inputs.update({k: np.repeat(v[:, None], self.epochs, axis=1) for k, v in batch.items()})
        start = time.perf_counter()
        out = self.run_update.run(inputs, symbols={**symbols, "I": self.epochs}).outputs
        updated = time.perf_counter() - start
        weights, opt_state = self.update.training.final_state(out)
        self.epoch_losses = [float(x) for x in np.asarray(out["loss"])]
        stats = StepStats(
            state.step,
            float(rollout.rewards.mean()),
            float(rollout.lengths.mean()),
            self.epoch_losses[-1],
            rollout.kl(),
            {"generation": generated, "update": updated},
        )
        return TrainerState(weights, state.reference, opt_state, state.step + 1), stats

    def evaluate(self, weights, problems: list[tuple[str, str]]) -> float:
        """Greedy accuracy (mean reward) on (prompt, answer) problems."""
        return self.greedy.evaluate(weights, problems)


def token_rewards(rollout: Rollout, kl_coef: float) -> np.ndarray:
    """[p, g, t]: -kl_coef * (logp - ref_logp) at each completion token,
    plus the completion's reward at its last."""
    shaped = -kl_coef * (rollout.old_logp - rollout.ref_logp) * rollout.mask
    last = rollout.mask.shape[-1] - 1 - np.argmax(rollout.mask[..., ::-1] > 0, axis=-1)
    p, g = np.indices(last.shape)
    shaped[p, g, last] += rollout.rewards
    return shaped.astype(rollout.mask.dtype)
