"""GRPO with the whole training loop compiled as one program
(programs.build_grpo): one call runs many iterations, each generating a
group of completions per prompt, scoring them with a Python callable,
computing the reference's log-probs beside the generation and updating the
policy with Adam. Python runs between calls only (and for the reward).

    trainer = GRPOProgramTrainer(config, GRPOAlgorithm(group=8), task.reward, tokenizer,
                                 prompt_width=6, max_new_tokens=3)
    state = trainer.start(sft_weights)                 # the reference model too
    state, stats = trainer.run(state, [prompts_0, prompts_1, ...])   # one list per iteration
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pdg import optim
from pdg.losses import GRPOAlgorithm
from pdg.lowering.cache import build_artifact
from pdg.nn import DecoderConfig
from pdg.programs import build_grpo
from pdg.runtime import load

from .trainer import GreedyEvaluator, StepStats, TrainerState, stop_ids


class GRPOProgramTrainer:
    def __init__(
        self,
        config: DecoderConfig,
        grpo: GRPOAlgorithm,
        reward: Callable[[str, str], float],
        tokenizer,
        prompt_width: int,
        max_new_tokens: int,
        lr: float = 1e-3,
        clip_norm: float | None = 1.0,
        workdir: Path | None = None,
        cache: Path | None = None,
        layout: str = "group",
        microbatch: int = 1,
        comm=None,
        share_prefill: bool | None = None,
        staleness: int = 0,
        batch_steps: bool = False,
        teacher_forced_reference: bool = False,
        teacher_forced_policy: bool = False,
    ):
        """`cache`: a directory of compiled artifacts (pdg.lowering.cache):
        a program compiled there before is loaded, not compiled again.
        `layout`: how the program holds a prompt's completions (see
        programs.build_grpo): "group", the rows of aligned microbatches of
        `microbatch` prompts that step together, or "completion", a point
        each (every batch's size must then be a multiple of `microbatch`).
        `comm` (an mpi4py communicator of several ranks, e.g.
        MPI.COMM_WORLD): data-parallel, every rank running this with the
        same arguments and batches; the program is split over the ranks
        (GRPOProgram.data_parallel()), each runs its share of every
        iteration's microbatches, and all take the steps one process takes
        on the whole batch. Rank 0 compiles it (or finds it in `cache`).
        `share_prefill`: see programs.build_grpo (None: its default).
        `staleness` k: iteration i samples with the weights of iteration
        i - k, the loss corrects with the ratio to them (build_grpo's).
        `batch_steps=True`: the backward's weight gradients are one product
        over all the replayed steps, not one per step (compile_module's;
        to measure: slower or no faster so far).
        `teacher_forced_reference`: the reference scores the finished
        completions over all their steps at once (build_grpo's);
        `teacher_forced_policy`: so does the policy, for the loss and its
        gradient (build_grpo's)."""
        if not isinstance(grpo, GRPOAlgorithm):
            raise TypeError("GRPOProgramTrainer runs GRPO: pass losses.GRPOAlgorithm")
        self.config, self.grpo, self.reward, self.tok = config, grpo, reward, tokenizer
        work = Path(workdir or tempfile.mkdtemp(prefix="pdg-grpo-program-"))

        def reward_of_ids(prompt_ids, completion_ids) -> float:
            return reward(tokenizer.decode(prompt_ids), tokenizer.decode(completion_ids))

        self.program = build_grpo(
            config,
            grpo,
            reward_of_ids,
            eos=stop_ids(tokenizer),
            prompt_width=prompt_width,
            max_new_tokens=max_new_tokens,
            optimizer=optim.Adam(lr),
            clip_norm=clip_norm,
            layout=layout,
            microbatch=microbatch,
            share_prefill=share_prefill,
            staleness=staleness,
            teacher_forced_reference=teacher_forced_reference,
            teacher_forced_policy=teacher_forced_policy,
        )
        self.batch_steps = batch_steps
        self.comm = comm if comm is not None and comm.Get_size() > 1 else None
        if self.comm is None:
            built = build_artifact(
                self.program.program, "grpo", work, cache, batch_steps=batch_steps
            )
            self.compile_seconds = {"grpo": built.seconds}
            self.compile_phases = built.phases  # empty when the cache had it
            self.run_grpo = load(built.path)
        else:
            path, self.compile_seconds = self._compile_split(work, cache)
            self.compile_phases = {}  # compiled by rank 0 (or found): not timed by phase
            self.run_grpo = load(path)
        self.peak_bytes = 0  # the compiled code's peak in the last run() (inputs included)
        self.greedy = GreedyEvaluator(
            config, reward, tokenizer, prompt_width, max_new_tokens, work, cache=cache
        )
        self.compile_seconds["greedy"] = self.greedy.compile_seconds

    def _compile_split(self, work: Path, cache: Path | None) -> tuple[Path, dict]:
        """The data-parallel program compiled by rank 0 into its workdir
        (or found in `cache`), whose path every rank gets (one machine, or
        a shared file system); a failure there is raised on every rank."""
        path = error = None
        seconds = 0.0  # compiling (0 when it came from the cache)
        if self.comm.Get_rank() == 0:
            try:
                built = build_artifact(
                    self.program.program,
                    "grpo_data_parallel",
                    work,
                    cache,
                    split_over=self.program.SPLIT_DIM,
                    batch_steps=self.batch_steps,
                )
                path, seconds = built.path, built.seconds
            except Exception as e:  # every rank must hear of it
                error = f"{type(e).__name__}: {e}"
        path, seconds, error = self.comm.bcast((path, seconds, error), root=0)
        if error:
            raise RuntimeError(f"rank 0 could not compile the data-parallel program: {error}")
        return path, {"grpo": seconds}

    def start(self, weights: dict) -> TrainerState:
        """Training from `weights`, which are also the frozen reference."""
        return TrainerState(dict(weights), dict(weights))

    def run(
        self, state: TrainerState, batches: Sequence[Sequence[str]]
    ) -> tuple[TrainerState, list[StepStats]]:
        """len(batches) GRPO iterations in one call of the compiled program,
        iteration k on the prompts batches[k] (group-size completions of
        each; every batch the same size). A state that an earlier run()
        returned is consumed: the program writes the new weights and
        optimizer state into its arrays (no second copy of them), so use
        the state this call returns."""
        if state.consumed:
            raise ValueError(
                "this TrainerState was given to run() already: its arrays now hold the "
                "state that call returned; pass the returned state instead"
            )
        ids = [[self.tok.encode(p) for p in batch] for batch in batches]
        inputs = self.program.inputs(
            state.weights,
            state.reference,
            ids,
            seed=state.step,
            state=state.optimizer,
            start_step=state.step,
        )
        symbols = self.program.symbols(inputs)
        start = time.perf_counter()
        if self.comm is None:
            # Arrays the program returned last time are its to write into;
            # the caller's own (start()'s weights) are copied by the run.
            donate = self.run_grpo.donatable_inputs if state.owned else ()
            out = self.run_grpo.run(inputs, symbols, udfs=self.program.udfs, donate=donate)
            state.consumed = bool(donate)
        else:
            ranks = self.comm.Get_size()
            mine = self.program.shard(inputs, ranks, self.comm.Get_rank())
            symbols = {**symbols, "P": symbols["P"] // ranks}
            out = self.run_grpo.run(mine, symbols, udfs=self.program.udfs, comm=self.comm)
        seconds = (time.perf_counter() - start) / len(batches)
        self.peak_bytes = out.peak_bytes
        weights, optimizer = self.program.training.final_state(out.outputs)
        loss, kl = np.asarray(out.outputs["loss"]), np.asarray(out.outputs["kl"])
        # per completion, over [p, i, g] (or [p, i, M * G]: means need no order)
        rewards, lengths = np.asarray(out.outputs["reward"]), np.asarray(out.outputs["length"])
        if self.comm is not None:  # [w = 1, p, i, ...] of each rank: the whole batch's
            rewards = np.concatenate(self.comm.allgather(rewards[0]))
            lengths = np.concatenate(self.comm.allgather(lengths[0]))
        stats = [
            StepStats(
                state.step + k,
                float(rewards[:, k].mean()),
                float(lengths[:, k].mean()),
                float(loss[k]),
                float(kl[k]),
                {"iteration": seconds},
            )
            for k in range(len(batches))
        ]
        step = state.step + len(batches)
        return TrainerState(weights, state.reference, optimizer, step, owned=True), stats

    def evaluate(self, weights, problems: list[tuple[str, str]]) -> float:
        """Greedy accuracy (mean reward) on (prompt, answer) problems."""
        return self.greedy.evaluate(weights, problems)
