"""GRPO (or RLOO) training with compiled programs: sampling (the decode program,
seeded per iteration, which also computes the policy's and the reference's
log-probs of each chosen token as it generates), rewards from a Python
callable, and the update (the rl_step program with its optimizer,
reading those log-probs). Python runs between iterations only: each
iteration is one call of each compiled program. The sampling program, the
sampling itself and the rollout's update inputs (build_sampler, sample,
Rollout) serve rl.PPOTrainer too.

    trainer = SampledGRPOTrainer(config, GRPOAlgorithm(group=8), task.reward, tokenizer,
                          prompt_width=6, max_new_tokens=3)
    state = trainer.start(sft_weights)            # the reference model too
    for k in range(100):
        state, stats = trainer.step(state, prompts)
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pdg import optim
from pdg.losses import GRPOAlgorithm, RLOOAlgorithm
from pdg.lowering.cache import build_artifact
from pdg.nn import DecoderConfig
from pdg.programs import build_decode, build_rl_step
from pdg.runtime import load


@dataclass
class TrainerState:
    weights: dict  # the policy's, by path
    reference: dict  # the frozen reference model's, by path
    optimizer: dict | None = None  # optimizer state, by path then slot
    step: int = 0
    # The weights and optimizer state are arrays a compiled run returned:
    # a trainer's next run may write into them (GRPOProgramTrainer donates
    # them), after which this state is `consumed` and the returned one holds
    # its arrays.
    owned: bool = False
    consumed: bool = False


@dataclass
class StepStats:
    step: int
    reward: float  # mean over the completions
    length: float  # mean completion length (tokens, EOS included)
    loss: float
    kl: float  # mean per-token KL to the reference at sampling (k3 estimate)
    seconds: dict = field(default_factory=dict)  # generation / update


class SampledGRPOTrainer:
    def __init__(
        self,
        config: DecoderConfig,
        grpo: GRPOAlgorithm | RLOOAlgorithm,
        reward: Callable[[str, str], float],
        tokenizer,
        prompt_width: int,
        max_new_tokens: int,
        lr: float = 1e-3,
        clip_norm: float | None = 1.0,
        workdir: Path | None = None,
        max_batch: int = 1024,
        vectorize: bool = False,
        cache: Path | None = None,
    ):
        """`vectorize`: compile sampling and the update with pdg-vectorize
        (the sequences, resp. the prompts, folded into the point type: one
        matrix product per step instead of one matrix-vector product per
        sequence). Faster for small models over many sequences; see
        bench/grpo.py --vectorize for both at a given shape. `cache`: a
        directory of compiled artifacts (pdg.lowering.cache)."""
        if not isinstance(grpo, (GRPOAlgorithm, RLOOAlgorithm)):
            raise TypeError(
                "the trainer runs GRPO or RLOO: pass pdg.losses.GRPOAlgorithm or "
                "pdg.losses.RLOOAlgorithm"
            )
        self.config, self.grpo, self.reward, self.tok = config, grpo, reward, tokenizer
        self.prompt_width = prompt_width
        self.length = prompt_width + max_new_tokens  # positions of prompt + completion
        self.new = max_new_tokens
        work = Path(workdir or tempfile.mkdtemp(prefix="pdg-grpo-"))

        self.sampler = build_sampler(config, tokenizer, self.length, prompt_width, grpo, max_batch)
        self.update = build_rl_step(
            config, self.length, grpo, optim.Adam(lr), clip_norm, reference_logp=True
        )
        self.greedy = GreedyEvaluator(
            config, reward, tokenizer, prompt_width, max_new_tokens, work, max_batch, cache
        )
        self.compile_seconds = {"greedy": self.greedy.compile_seconds}
        paths = {}
        for name, prog, folded in (
            ("sample", self.sampler.program, "b"),
            ("update", self.update.program, "p"),
        ):
            folded = vectorize and folded  # the dim pdg-vectorize folds, or False
            built = build_artifact(prog, name, work, cache, vectorize=folded)
            self.compile_seconds[name] = built.seconds
            paths[name] = built.path
        self.run_sample = load(paths["sample"])
        self.run_update = load(paths["update"])

    def start(self, weights: dict) -> TrainerState:
        """Training from `weights`, which are also the frozen reference."""
        return TrainerState(dict(weights), dict(weights))

    def complete(self, weights, prompts: list[str], seed: int, reference: dict):
        """Sampled completions (token ids up to and with EOS) and the
        policy's and the reference's log-probs of each completion token."""
        return sample(
            self.sampler, self.run_sample, self.tok, weights, prompts, seed, reference, self.new
        )

    def evaluate(self, weights, problems: list[tuple[str, str]]) -> float:
        """Greedy accuracy (mean reward) on (prompt, answer) problems."""
        return self.greedy.evaluate(weights, problems)

    def step(self, state: TrainerState, prompts: list[str]) -> tuple[TrainerState, StepStats]:
        """One GRPO iteration on `prompts` (group-size completions of each)."""
        start = time.perf_counter()
        rollout = Rollout.sample(self, state, prompts, self.grpo.group)
        generated = time.perf_counter() - start
        inputs = self.update.training.initial_inputs(
            state.weights, state.optimizer, start_step=state.step
        )
        # [p, i, g, t]: one iteration (i = 0)
        names = ["tokens", "targets", "mask", "ref_logp", "rewards"]
        if isinstance(self.grpo, GRPOAlgorithm):  # RLOO's update has no ratio to the sampler
            names.append("old_logp")
        inputs.update({name: getattr(rollout, name)[:, None] for name in names})
        start = time.perf_counter()
        out = self.run_update.run(inputs, symbols={"I": 1, "P": len(prompts)}).outputs
        updated = time.perf_counter() - start
        weights, opt_state = self.update.training.final_state(out)
        stats = StepStats(
            state.step,
            float(rollout.rewards.mean()),
            float(rollout.lengths.mean()),
            float(np.asarray(out["loss"])[0]),
            rollout.kl(),
            {"generation": generated, "update": updated},
        )
        return TrainerState(weights, state.reference, opt_state, state.step + 1), stats


def stop_ids(tokenizer) -> tuple[int, ...]:
    """The ids that end a completion: a model tokenizer's `eos_ids` (e.g.
    pdg.models.Tokenizer, several for some models), else its `eos`."""
    ids = tuple(getattr(tokenizer, "eos_ids", None) or ())
    if not ids and getattr(tokenizer, "eos", None) is not None:
        ids = (int(tokenizer.eos),)
    if not ids:
        raise ValueError(
            "the tokenizer has no end-of-sequence id (give it `eos`, or load a model whose "
            "config or tokenizer names one)"
        )
    return ids


def build_sampler(config, tokenizer, length: int, prompt_width: int, algorithm, max_batch: int):
    """The decode program that samples completions (at the algorithm's
    temperature, the seed given at each run, each sequence stopped at its
    own cap) and gives the policy's and the reference's log-probs of the
    chosen tokens, step by step: the update reads them."""
    return build_decode(
        config,
        eos=stop_ids(tokenizer),
        max_len=length,
        prompt_width=prompt_width,
        max_batch=max_batch,
        sample_seed="input",
        response_limit=True,
        temperature=algorithm.temperature,
        output_logits=False,
        log_probs=True,
        reference=True,
    )


def sample(decode, run, tok, weights, prompts: list[str], seed: int, reference: dict, limit: int):
    """Completions of `prompts` sampled by the compiled decode program `run`
    (built with log_probs and reference), and the policy's and the
    reference's log-probs of each completion token. A completion ends at
    its EOS or after `limit` tokens: the program (built with
    response_limit) stops each sequence at its own cap."""
    ids = [tok.encode(p) for p in prompts]
    # The step at position len(p) - 1 + k samples completion token k + 1.
    caps = [len(p) + limit - 1 for p in ids]
    inputs = decode.inputs(weights, ids, limits=caps, seed=seed, reference_weights=reference)
    out = run.run(inputs, symbols={"B": len(prompts)}).outputs
    completions, logps = [], []
    for k, p in enumerate(ids):
        first = len(p) - 1  # the step that predicts the first completion token
        completions.append([int(x) for x in np.asarray(out["tokens"][k])[first:]])
        logps.append((np.asarray(out["logp"][k])[first:], np.asarray(out["ref_logp"][k])[first:]))
    return completions, logps


@dataclass
class Rollout:
    """A batch of sampled completions as update inputs over [p, g, t]:
    the fed `tokens`, the `targets` (next tokens), `mask` (1 where the target
    is a completion token), the sampler's `old_logp` and the reference's
    `ref_logp` of each target; per completion its `rewards` and `lengths`
    (completion tokens, EOS included)."""

    tokens: np.ndarray
    targets: np.ndarray
    mask: np.ndarray
    old_logp: np.ndarray
    ref_logp: np.ndarray
    rewards: np.ndarray
    lengths: np.ndarray

    @staticmethod
    def sample(trainer, state: TrainerState, prompts: list[str], group: int) -> Rollout:
        """`group` completions of each prompt from the trainer's sampler at
        the state's weights (seeded by its step), scored by its reward."""
        tok, length = trainer.tok, trainer.length
        repeated = [p for p in prompts for _ in range(group)]
        completions, logps = trainer.complete(
            state.weights, repeated, seed=state.step, reference=state.reference
        )
        real = np.float64 if trainer.config.dtype == "f64" else np.float32
        shape = (len(prompts), group, length)
        out = Rollout(
            np.full(shape, tok.eos, np.int64),
            np.full(shape, tok.eos, np.int64),
            np.zeros(shape, real),
            np.zeros(shape, real),
            np.zeros(shape, real),
            np.zeros(shape[:2], real),
            np.zeros(shape[:2], np.int64),
        )
        for k, (prompt, completion, (lp, rp)) in enumerate(
            zip(repeated, completions, logps, strict=True)
        ):
            p, g = divmod(k, group)
            ids = tok.encode(prompt)
            seq = ids + completion
            n = len(seq) - 1  # positions fed to the model
            first = len(ids) - 1
            out.tokens[p, g, :n] = seq[:-1]
            out.targets[p, g, :n] = seq[1:]
            out.mask[p, g, first:n] = 1.0
            out.old_logp[p, g, first:n] = lp[: n - first]
            out.ref_logp[p, g, first:n] = rp[: n - first]
            out.rewards[p, g] = trainer.reward(prompt, tok.decode(completion))
            out.lengths[p, g] = len(completion)
        return out

    def kl(self) -> float:
        """The mean per-token KL from the sampler to the reference (k3)."""
        delta = (self.ref_logp.astype(np.float64) - self.old_logp)[self.mask > 0]
        return float((np.exp(delta) - delta - 1.0).mean())


class GreedyEvaluator:
    """Greedy decoding, compiled once, for held-out accuracy."""

    def __init__(
        self,
        config,
        reward,
        tokenizer,
        prompt_width,
        max_new_tokens,
        workdir: Path,
        max_batch=1024,
        cache: Path | None = None,
    ):
        self.reward, self.tok = reward, tokenizer
        self.decode = build_decode(
            config,
            eos=stop_ids(tokenizer),
            max_len=prompt_width + max_new_tokens,
            prompt_width=prompt_width,
            max_batch=max_batch,
            output_logits=False,
        )
        built = build_artifact(self.decode.program, "greedy", workdir, cache)
        self.compile_seconds = built.seconds
        self.run = load(built.path)

    def completions(self, weights, prompts: list[str]) -> list[list[int]]:
        """Token ids of each greedy completion, up to and with EOS."""
        ids = [self.tok.encode(p) for p in prompts]
        out = self.run.run(self.decode.inputs(weights, ids), symbols={"B": len(ids)}).outputs
        return [
            [int(x) for x in np.asarray(out["tokens"][k])[len(p) - 1 :]] for k, p in enumerate(ids)
        ]

    def evaluate(self, weights, problems: list[tuple[str, str]]) -> float:
        """Greedy accuracy (mean reward) on (prompt, answer) problems."""
        prompts = [p for p, _ in problems]
        completions = self.completions(weights, prompts)
        scores = [
            self.reward(p, self.tok.decode(c)) for p, c in zip(prompts, completions, strict=True)
        ]
        return float(np.mean(scores))
