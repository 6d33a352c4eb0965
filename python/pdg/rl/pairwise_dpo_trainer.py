"""DPO from preference pairs, compiled: the update (programs.build_rl_step
with losses.DPOAlgorithm and Adam) runs one iteration per batch of pairs, and one
call runs many batches, the weights and Adam's state flowing between them
inside the program. No reward model and no sampling: each pair is a prompt
with a chosen and a rejected completion (text), and the reference is the
policy DPO starts from.

    trainer = PairwiseDPOTrainer(config, DPOAlgorithm(beta=0.1), tokenizer, prompt_width=6,
                         max_new_tokens=3)
    state = trainer.start(sft_weights)
    state, losses = trainer.run(state, [[(prompt, chosen, rejected), ...], ...])
"""

from __future__ import annotations

import inspect
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pdg import optim
from pdg.losses import DPOAlgorithm
from pdg.lowering.cache import build_artifact
from pdg.nn import DecoderConfig
from pdg.programs import build_rl_step
from pdg.runtime import load

from .trainer import GreedyEvaluator, TrainerState

Pair = tuple[str, str, str]  # (prompt, chosen completion, rejected completion)


class PairwiseDPOTrainer:
    def __init__(
        self,
        config: DecoderConfig,
        dpo: DPOAlgorithm,
        tokenizer,
        prompt_width: int,
        max_new_tokens: int,
        lr: float = 1e-3,
        clip_norm: float | None = 1.0,
        reward: Callable[[str, str], float] | None = None,
        workdir: Path | None = None,
        cache: Path | None = None,
    ):
        """`max_new_tokens` bounds a completion's tokens, its EOS included.
        `reward`: only for evaluate() (greedy accuracy on held-out
        problems); DPO itself reads no reward."""
        if not isinstance(dpo, DPOAlgorithm):
            raise TypeError("PairwiseDPOTrainer runs DPO: pass pdg.losses.DPOAlgorithm")
        self.config, self.tok = config, tokenizer
        self.prompt_width, self.new = prompt_width, max_new_tokens
        self.length = prompt_width + max_new_tokens  # positions of prompt + completion
        work = Path(workdir or tempfile.mkdtemp(prefix="pdg-dpo-"))
        self.update = build_rl_step(config, self.length, dpo, optim.Adam(lr), clip_norm)
        built = build_artifact(self.update.program, "dpo_update", work, cache)
        self.compile_seconds = {"dpo_update": built.seconds}
        self.run_update = load(built.path)
        self.greedy = None
        if reward is not None:
            self.greedy = GreedyEvaluator(
                config, reward, tokenizer, prompt_width, max_new_tokens, work, cache=cache
            )
            self.compile_seconds["greedy"] = self.greedy.compile_seconds
        self.seconds = 0.0  # the last run()'s time per iteration

    def start(self, weights: dict) -> TrainerState:
        """Training from `weights`, which are also the frozen reference."""
        return TrainerState(dict(weights), dict(weights))

    def sequences(self, batches: Sequence[Sequence[Pair]]) -> dict[str, np.ndarray]:
        """The update's tokens, targets and mask over [p, i, g, t]: pair p
        of batch i, g = 0 its chosen and 1 its rejected completion (each
        followed by EOS; the mask covers the completion's tokens)."""
        count = len(batches[0]) if batches else 0
        if count == 0 or any(len(b) != count for b in batches):
            raise ValueError("give batches of pairs, every batch the same (nonzero) size")
        shape = (count, len(batches), 2, self.length)
        real = np.float64 if self.config.dtype == "f64" else np.float32
        tokens = np.full(shape, self.tok.eos, np.int64)
        targets = np.full(shape, self.tok.eos, np.int64)
        mask = np.zeros(shape, real)
        for i, batch in enumerate(batches):
            for p, (prompt, *completions) in enumerate(batch):
                ids = self.tok.encode(prompt)
                if not 0 < len(ids) <= self.prompt_width:
                    raise ValueError(
                        f"prompt {prompt!r} has {len(ids)} tokens; "
                        f"each needs 1 to prompt_width={self.prompt_width}"
                    )
                for g, text in enumerate(completions):
                    completion = continuation_ids(self.tok, text) + [self.tok.eos]
                    if len(completion) > self.new:
                        raise ValueError(
                            f"completion {text!r} of {prompt!r} has {len(completion)} tokens "
                            f"with its EOS; max_new_tokens is {self.new}"
                        )
                    seq = ids + completion
                    n = len(seq) - 1  # positions fed to the model
                    tokens[p, i, g, :n] = seq[:-1]
                    targets[p, i, g, :n] = seq[1:]
                    mask[p, i, g, len(ids) - 1 : n] = 1.0
        return {"tokens": tokens, "targets": targets, "mask": mask}

    def run(
        self, state: TrainerState, batches: Sequence[Sequence[Pair]]
    ) -> tuple[TrainerState, np.ndarray]:
        """len(batches) DPO updates in one call of the compiled update,
        update k on the pairs batches[k]. Returns the new state and the loss
        of each update (at the weights before it)."""
        inputs = self.update.training.initial_inputs(
            state.weights, state.optimizer, start_step=state.step
        )
        inputs.update(
            self.update.reference.inputs_from({f"ref.{k}": v for k, v in state.reference.items()})
        )
        inputs.update(self.sequences(batches))
        symbols = {"P": len(batches[0]), "I": len(batches)}
        start = time.perf_counter()
        out = self.run_update.run(inputs, symbols).outputs
        self.seconds = (time.perf_counter() - start) / len(batches)
        weights, optimizer = self.update.training.final_state(out)
        step = state.step + len(batches)
        return TrainerState(weights, state.reference, optimizer, step), np.asarray(out["loss"])

    def evaluate(self, weights, problems: list[tuple[str, str]]) -> float:
        """Greedy accuracy (mean reward) on (prompt, answer) problems."""
        if self.greedy is None:
            raise ValueError("evaluate() needs the trainer built with a reward")
        return self.greedy.evaluate(weights, problems)


def continuation_ids(tokenizer, text: str) -> list[int]:
    """The ids of a text that follows a prompt: without the special tokens
    a model's tokenizer puts at the start of a text (Llama's BOS)."""
    if "add_special_tokens" in inspect.signature(tokenizer.encode).parameters:
        return list(tokenizer.encode(text, add_special_tokens=False))
    return list(tokenizer.encode(text))
