"""GRPO as one program: every iteration's generation, rewards, advantages,
loss, gradients and optimizer step in a single compiled program, with no
Python between iterations but the reward callback.

Dims: p (a microbatch of prompts, or a prompt; given at launch), i
(iteration, given at launch; only with an optimizer) and t (position in
prompt + completion, dynamic). The G completions of a prompt are laid out
one of two ways:

- "group" (the default): aligned microbatches. A microbatch holds the
  groups of `microbatch` prompts (M), and their M * G completions are the
  rows of one point ([p, i, t] with points (M * G, ...)): every row is at
  the same position at every step, so each step of the policy and of the
  reference is one matrix product over a contiguous (M * G, d) block, with
  no gather or scatter. GRPOProgram.inputs() groups each iteration's
  prompts by length (a stable sort) before cutting them into microbatches,
  so a microbatch's prompts have equal lengths wherever the batch allows;
  where they differ, a row of a shorter prompt starts sampling earlier, on
  its own (a row's tokens are its prompt's while its position is inside
  it). A microbatch steps until its last completion ends (EOS, or
  max_new_tokens tokens); a row that ended before goes on computing and is
  masked out of the loss, the reward and the lengths. Stores along t hold
  the microbatch's steps, not the bound. p then counts microbatches, and
  the per-row outputs are in sorted order (GRPOProgram.by_prompt() and
  completions() put them back in the caller's). With share_prefill (the
  default here), the positions before the shortest prompt of a microbatch
  ends run once per prompt over a dim s (M rows), and t counts the M * G
  rows' steps from that prompt's last position on (see build_grpo()).
- "completion": each completion is a point of its own over a static dim g
  ([p, i, g, t]) and ends at its own step.

Inputs: each iteration's prompts `prompt[p, i]` (right-padded to
prompt_width; (M, prompt_width) per microbatch in the group layout) and
`prompt_len[p, i]`, the sampling `seed`, the policy's
weights (its starting point with an optimizer) and the frozen reference's
(`ref.*`).

At each position the policy's logits give the sampled token and its
log-prob; the loss differentiates those same logits, so no forward pass is
run again over the finished completions, and the reference model runs step
by step beside the policy. The reward is a host callback on each finished
completion (in the group layout, one call per microbatch that scores each
row).

Without an optimizer the program is one iteration (no i) and outputs the
loss's gradient for every policy weight (`g_<path>`) and the sampled
`tokens` (GRPOProgram.completions() reads them, whether t starts at
position 0 or after a shared prefill); with one, the weights and
the optimizer state are recurrences over i and the outputs are the final
state (optim.Training). Either way it outputs per iteration the `loss`, the
mean per-token `kl` to the reference (k3, over the completion tokens), the
mean per-token `entropy` of the sampling distribution (the policy's
softmax at the temperature, over the completion tokens; with an optimizer
also the gradients' global norm before clipping, `grad_norm`), and per
completion its `reward` and `length` (completion tokens, EOS included):
over [p, i, g], or per microbatch (M * G,) over [p, i].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir

import pdg.frontend as pf
from pdg import autodiff, losses, optim
from pdg.frontend.dtypes import numpy_dtype
from pdg.nn import GPT, DecoderConfig, LoraSpec, teacher_forced
from pdg.passes.data_parallel import split_over_workers

from .reward_model import BoundRewardModel, as_reward_model
from .sequences import check_positions, eos_ids, is_eos

# The reward of one completion: (prompt token ids, completion token ids up
# to and with EOS when it ended on one) -> a number.
RewardFn = Callable[[np.ndarray, np.ndarray], float]
# With keyed rewards (build_grpo(..., keyed_reward=True)), the rewards of a
# point's completions in one call: (each completion's prompt key, as given
# to GRPOProgram.inputs(keys=...); its prompt's ids; its ids) -> a number each.
KeyedRewardFn = Callable[[list[int], list[np.ndarray], list[np.ndarray]], Sequence[float]]

# How the per-token losses of an iteration make its loss (TRL's loss_type):
# "grpo" averages each completion over its tokens, then the completions;
# "dapo" (and "bnpo", the same with one update per batch) averages every
# token of the batch; "dr_grpo" sums the tokens of each completion over
# max_new_tokens, then averages the completions.
LOSS_TYPES = ("grpo", "dapo", "bnpo", "dr_grpo")


@dataclass
class GRPOProgram:
    program: pf.Program
    policy: GPT
    reference: GPT | None  # None with LoRA: the policy without its adapters
    prompt_width: int
    udfs: dict  # the host callbacks a run needs, by name
    group: int  # completions per prompt
    eos: tuple[int, ...]  # the ids that end a completion
    max_new_tokens: int
    layout: str = "group"  # see build_grpo()
    microbatch: int = 1  # prompts per point in the group layout
    training: optim.Training | None = None  # with an optimizer
    keyed: bool = False  # the reward reads each prompt's key (input prompt_key)
    reward_model: BoundRewardModel | None = None  # build_grpo(reward_model=...)
    shared_prefill: bool = False  # see build_grpo(share_prefill=)
    staleness: int = 0  # see build_grpo(staleness=)

    def overlap_plan(self):
        """The isl plan (pdg.analysis.overlap) that runs the generation of
        iteration i + 1 beside the update of iteration i: its parts, each
        value's stage, and `problems`, the reads that forbid it (with
        staleness 0, the sampling's read of the weights the update of the
        iteration before computes)."""
        from pdg.analysis.graph import read_graph
        from pdg.analysis.overlap import plan_overlap
        from pdg.ir import make_context, parse_text

        if self.training is None:
            raise pf.ProgramError("a program without an optimizer has no iterations to overlap")
        module = parse_text(str(self.program.build()), "grpo", make_context())
        graph = read_graph(next(op for op in module.body.operations if op.name == "pdg.graph"))
        return plan_overlap(graph, self.training.dim.name, ["next"])

    def inputs(
        self,
        weights: dict,
        reference_weights: dict | None,
        prompts: Sequence[Sequence[Sequence[int]]],
        seed: int,
        state: dict | None = None,
        start_step: int = 0,
        keys: Sequence[Sequence[int]] | None = None,
        reward_weights: dict | None = None,
    ) -> dict[str, np.ndarray]:
        """Program inputs: `prompts[i][p]` the token ids of prompt p at
        iteration i (one iteration without an optimizer), the policy's
        weights (and optimizer `state`, `start_step` when training) and the
        reference's, by path (None with LoRA: `weights` holds the base
        model and the adapters). `keys[i][p]`: an integer the keyed reward
        receives with each completion of that prompt (keyed programs only).
        `reward_weights`: the PyTorch reward model's state_dict (programs
        built with reward_model= only; None: the module's weights now)."""
        iterations = len(prompts)
        if iterations == 0 or not prompts[0]:
            raise ValueError("give at least one iteration of at least one prompt")
        if self.training is None and iterations != 1:
            raise ValueError("a program built without an optimizer runs one iteration")
        count = len(prompts[0])
        if any(len(batch) != count for batch in prompts):
            raise ValueError("every iteration needs the same number of prompts")
        if count % self.microbatch:
            raise ValueError(
                f"{count} prompts per iteration do not fill microbatches of "
                f"{self.microbatch}: give a multiple of {self.microbatch}"
            )
        if self.keyed != (keys is not None):
            raise ValueError(
                "a program built with keyed_reward=True needs keys=, and only it takes them"
            )
        padded = np.zeros((iterations, count, self.prompt_width), np.int64)
        lengths = np.zeros((iterations, count), np.int64)
        key_of = np.zeros((iterations, count), np.int64)
        for it, batch in enumerate(prompts):
            for k, ids in enumerate(batch):
                if not 0 < len(ids) <= self.prompt_width:
                    raise ValueError(
                        f"prompt {k} of iteration {it} has {len(ids)} tokens; "
                        f"each needs 1 to prompt_width={self.prompt_width}"
                    )
            order = self.order([len(ids) for ids in batch])
            for k, source in enumerate(order):
                ids = batch[source]
                padded[it, k, : len(ids)] = ids
                lengths[it, k] = len(ids)
                if keys is not None:
                    key_of[it, k] = keys[it][source]
        if self.layout == "group":  # microbatches of M prompts: [p] points (M, ...)
            padded = padded.reshape(iterations, -1, self.microbatch, self.prompt_width)
            lengths = lengths.reshape(iterations, -1, self.microbatch)
            key_of = key_of.reshape(iterations, -1, self.microbatch)
        if self.training is None:
            padded, lengths, key_of = padded[0], lengths[0], key_of[0]
            inputs = self.policy.inputs_from(weights)
        else:  # the program's dims: [p, i]
            padded, lengths = np.swapaxes(padded, 0, 1), np.swapaxes(lengths, 0, 1)
            key_of = np.swapaxes(key_of, 0, 1)
            # The frozen weights (LoRA's base), then the trained ones.
            inputs = self.policy.inputs_from(weights) if self.reference is None else {}
            inputs.update(self.training.initial_inputs(weights, state, start_step=start_step))
        if self.reference is not None:
            inputs.update(
                self.reference.inputs_from({f"ref.{k}": v for k, v in reference_weights.items()})
            )
        elif reference_weights is not None:
            raise ValueError(
                "with LoRA the reference is the base model: give reference_weights=None"
            )
        inputs.update(prompt=padded, prompt_len=lengths, seed=np.asarray(seed, np.int64))
        if self.keyed:
            inputs["prompt_key"] = key_of
        if self.reward_model is not None:
            inputs.update(self.reward_model.inputs_from(reward_weights))
        elif reward_weights is not None:
            raise ValueError("reward_weights are for programs built with reward_model=")
        return inputs

    def order(self, prompt_lengths: Sequence[int]) -> np.ndarray:
        """The prompts of one iteration in the order the program holds
        them: grouped by length (a stable sort) in the group layout, so
        that microbatches align; as given in the completion layout."""
        if self.layout != "group":
            return np.arange(len(prompt_lengths))
        return np.argsort(np.asarray(prompt_lengths), kind="stable")

    def by_prompt(self, values, prompt_lengths: Sequence[int]) -> np.ndarray:
        """A per-completion output (`reward`, `length`) as [prompt, ..., g]
        in the caller's order of the prompts, from the program's [p, ...,
        g] (completion layout) or per-microbatch [p, ..., M * G] (group)."""
        values = np.asarray(values)
        if self.layout != "group":
            return values
        points, middle = values.shape[0], values.shape[1:-1]
        rows = values.reshape(points, *middle, self.microbatch, self.group)
        rows = np.moveaxis(rows, -2, 1).reshape(points * self.microbatch, *middle, self.group)
        held = np.empty_like(rows)
        held[self.order(prompt_lengths)] = rows
        return held

    def completions(self, tokens, prompt_lengths: Sequence[int]) -> list[list[np.ndarray]]:
        """completions[p][g]: the token ids completion g of prompt p chose,
        up to and with its EOS, from the `tokens` output of a one-iteration
        program (a list when the sequences' lengths differ), prompts in the
        caller's order."""
        out = [None] * len(prompt_lengths)
        rows = range(self.group)
        held = [prompt_lengths[source] for source in self.order(prompt_lengths)]
        for k, source in enumerate(self.order(prompt_lengths)):
            n = prompt_lengths[source]
            if self.layout == "group":
                steps = np.asarray(tokens[k // self.microbatch])  # (T, M * G)
                first = (k % self.microbatch) * self.group
                begin = n - 1 - self._first_step(held, k)
                chosen = [steps[begin:, first + row] for row in rows]
            else:  # [p, g, t], in (p, g) order when ragged
                if isinstance(tokens, list):
                    chosen = [np.asarray(tokens[k * self.group + row])[n - 1 :] for row in rows]
                else:
                    chosen = [np.asarray(tokens[k, row])[n - 1 :] for row in rows]
            out[source] = [_completion(c, self.eos, self.max_new_tokens) for c in chosen]
        return out

    # The dim that data_parallel() splits over the ranks (microbatches or
    # prompts), and the inputs over it.
    SPLIT_DIM = "p"
    PER_PROMPT_INPUTS = ("prompt", "prompt_len", "prompt_key")

    def data_parallel(self) -> ir.Module:
        """The program with p split over a worker dim `w < world W`
        (pdg-split-over-workers): each rank runs its share of the
        microbatches (or prompts) of every iteration, and the sums over
        them (loss, KL, the gradients) are all-reduced, so every rank
        takes the step one process takes on the whole batch. Sampling is
        keyed by the global coordinates: the same samples too."""
        module = self.program.build()
        split_over_workers(module, self.SPLIT_DIM)
        return module

    def shard(self, inputs: dict, ranks: int, rank: int | None = None) -> dict:
        """`inputs` (of the whole batch, from inputs()) for the
        data_parallel() program on `ranks` ranks: rank `rank`'s share of
        p, with the worker dim's extent of 1 in front; every rank's,
        stacked along the worker dim, when `rank` is None (the
        interpreter runs every rank)."""
        points = inputs["prompt_len"].shape[0]
        if ranks < 1 or points % ranks:
            raise ValueError(
                f"{points} points of p (microbatches) do not split evenly over {ranks} ranks"
            )
        share = points // ranks
        out = dict(inputs)
        for name in self.PER_PROMPT_INPUTS:
            if name not in inputs:
                continue
            x = np.asarray(inputs[name])
            stacked = x.reshape(ranks, share, *x.shape[1:])
            out[name] = stacked if rank is None else stacked[rank : rank + 1]
        return out

    def _first_step(self, held_lengths: Sequence[int], k: int) -> int:
        """The position of the first generation step of held prompt k's
        microbatch: 0, or with a shared prefill its shortest prompt's last
        position (the steps before are the prefill's)."""
        if not self.shared_prefill:
            return 0
        start = (k // self.microbatch) * self.microbatch
        return min(held_lengths[start : start + self.microbatch]) - 1

    def symbols(self, inputs: dict) -> dict[str, int]:
        """The launch symbols of a run on `inputs`."""
        shape = inputs["prompt_len"].shape  # [p] or [p, i]
        if self.training is None:
            return {"P": shape[0]}
        return {"P": shape[0], "I": shape[1]}


LAYOUTS = ("group", "completion")


def build_grpo(
    config: DecoderConfig,
    grpo: losses.GRPOAlgorithm | losses.RLOOAlgorithm,
    reward: RewardFn | None,
    *,
    eos: int | Sequence[int] | None,
    prompt_width: int,
    max_new_tokens: int,
    optimizer: optim.Optimizer | None = None,
    clip_norm: float | None = None,
    layout: str = "group",
    microbatch: int = 1,
    loss_type: str = "grpo",
    keyed_reward: bool = False,
    lora: LoraSpec | None = None,
    scale_rewards: str = "group",
    gradients: bool = True,
    reward_model=None,
    share_prefill: bool | None = None,
    staleness: int = 0,
    teacher_forced_reference: bool = False,
    teacher_forced_policy: bool = False,
) -> GRPOProgram:
    """`grpo`: the algorithm, GRPO's, or RLOO's as TRL's RLOOTrainer has
    it (losses.rloo: the leave-one-out advantages of rewards with the KL
    penalty taken off, the loss on each completion's summed log-probs, and
    `kl` the first-order log-ratio). `eos`: the id, or ids, that end a
    completion. `layout`: "group" (the default) steps the completions of
    `microbatch` prompts together, as the rows of one point; "completion"
    gives each completion its own point over a dim g (see the module's
    docstring). `loss_type`: see LOSS_TYPES.
    `keyed_reward`: `reward` is a KeyedRewardFn, called once per point with
    every completion of the point and its prompt's key (an input).
    `gradients=False` (without an optimizer): no gradient outputs, only
    the samples and their rewards, loss and KL (an evaluation).
    `scale_rewards` (TRL's, GRPO only): the advantages are the rewards less
    their group's mean, divided by the group's std ("group"), by the std of
    the iteration's whole batch ("batch"), or not divided ("none").
    `lora`: only the adapters it adds to the policy train; the reference is
    the policy without them (one set of base weights, no `ref.*` inputs).
    `reward_model`: a torch.nn.Module (or programs.RewardModel) that
    scores each completion inside the program, instead of `reward` (give
    None): see programs/reward_model.py for its forward(ids, lengths).

    `share_prefill` (the default in the group layout with full attention):
    the positions every row of a microbatch is still in its prompt at
    (up to the shortest prompt's last) run once per prompt, M rows over a
    dim s of their own, and the M * G rows' steps start there, attending
    over that shared cache and their own; the samples, the loss and its
    gradients are those of share_prefill=False, which steps all M * G
    rows from position 0.
    `staleness` k (with an optimizer, GRPO, no LoRA): iteration i samples
    with the weights of iteration max(i - k, 0) (the behaviour policy, as
    a generator one or more updates behind the trainer does), the current
    policy scores the sampled tokens beside it, and the loss's ratio is to
    the behaviour policy's log-probs, clipped (PPO's off-policy
    correction). 0: the sampling policy is the policy itself.
    `teacher_forced_reference` (the group layout; a reference model that
    nn.teacher_forced supports): the reference scores the finished
    completions once, over all their steps at once (products of steps x
    rows rows), instead of one step at a time beside the policy; the same
    log-probs.
    `teacher_forced_policy` (the group layout, GRPO or RLOO on full
    weights, staleness 0): the loss's log-probs are the policy's over the
    finished completions, all steps at once, as TRL computes them after
    generating; the stepwise logits only sample. Its gradient then runs
    through that forward (products of steps x rows rows) instead of
    replaying the steps one at a time; the same loss and gradients.
    With either option and share_prefill, that model's shared prefill
    runs over all its positions at once too (nn.teacher_forced.prefix:
    products of positions x M rows, not M rows a position), and the
    policy's serves its sampling steps as well."""
    if not isinstance(grpo, (losses.GRPOAlgorithm, losses.RLOOAlgorithm)):
        raise pf.ProgramError("build_grpo() needs a losses.GRPOAlgorithm or RLOOAlgorithm")
    rloo = isinstance(grpo, losses.RLOOAlgorithm)
    if rloo and loss_type != "grpo":
        raise pf.ProgramError(
            "RLOO's loss is on each completion's summed log-probs: it takes no loss_type"
        )
    if rloo and scale_rewards != "group":
        raise pf.ProgramError("RLOO's advantages are leave-one-out baselines: no scale_rewards")
    if grpo.group < 2:
        raise pf.ProgramError(f"a group needs at least 2 completions, got {grpo.group}")
    if reward_model is not None:
        if reward is not None or keyed_reward:
            raise pf.ProgramError(
                "give either a reward callback or a reward_model, not both",
                hint="build_grpo(config, algorithm, None, reward_model=module, ...)",
            )
    elif not callable(reward):
        raise pf.ProgramError("the reward must be a callable (prompt ids, completion ids) -> float")
    if max_new_tokens < 1 or prompt_width < 1:
        raise pf.ProgramError("prompt_width and max_new_tokens must be at least 1")
    if loss_type not in LOSS_TYPES:
        raise pf.ProgramError(
            f"unknown loss_type '{loss_type}'", hint=f"use one of {', '.join(LOSS_TYPES)}"
        )
    if scale_rewards not in losses.grpo.SCALES:
        raise pf.ProgramError(
            f"unknown scale_rewards '{scale_rewards}'",
            hint=f"use one of {', '.join(losses.grpo.SCALES)}",
        )
    if layout not in LAYOUTS:
        raise pf.ProgramError(f"unknown layout '{layout}'", hint="use 'group' or 'completion'")
    if not isinstance(microbatch, int) or microbatch < 1:
        raise pf.ProgramError(f"microbatch must be a positive number of prompts, got {microbatch}")
    if microbatch > 1 and layout != "group":
        raise pf.ProgramError(
            "only the group layout holds several prompts per point",
            hint="use layout='group' or microbatch=1",
        )
    if isinstance(staleness, bool) or not isinstance(staleness, int) or staleness < 0:
        raise pf.ProgramError(f"staleness must be a whole number of iterations, got {staleness!r}")
    if staleness and optimizer is None:
        raise pf.ProgramError(
            "staleness needs an optimizer: without one the program is one iteration",
            hint="pass optimizer=..., or staleness=0",
        )
    if staleness and (rloo or lora is not None):
        raise pf.ProgramError(
            "staleness is built for GRPO's clipped loss on full weights so far",
            hint="use losses.GRPOAlgorithm without lora, or staleness=0",
        )
    full = all(pattern.kind == "full" for pattern in config.layer_patterns or (config.pattern,))
    if share_prefill is None:
        share_prefill = layout == "group" and full
    if share_prefill and layout != "group":
        raise pf.ProgramError(
            "share_prefill needs the group layout (a prompt's rows in one point)",
            hint="use layout='group', or share_prefill=False",
        )
    if share_prefill and not full:
        raise pf.ProgramError(
            "share_prefill needs full attention in every layer",
            hint="use share_prefill=False for window or block attention",
        )
    if teacher_forced_reference:
        if layout != "group" or lora is not None:
            raise pf.ProgramError(
                "teacher_forced_reference needs the group layout and a reference model of its own",
                hint="use layout='group' without lora, or teacher_forced_reference=False",
            )
    if teacher_forced_policy and (layout != "group" or lora is not None or staleness):
        raise pf.ProgramError(
            "teacher_forced_policy needs the group layout, full weights and staleness 0",
            hint="use layout='group' without lora or staleness, or teacher_forced_policy=False",
        )
    ends_ids = eos_ids(eos)
    check_positions(config, prompt_width + max_new_tokens - 1, "prompt_width + max_new_tokens - 1")
    prog = pf.Program("grpo")
    # p first: pdg-vectorize folds a leading dim (one step for all prompts).
    p = prog.dim("p", launch="P")
    i = prog.dim("i", launch="I") if optimizer is not None else None
    outer = [i] if i is not None else []
    # Per completion: g (static: the group) is a dim of every sequence value.
    group_dims = [prog.dim("g", grpo.group)] if layout == "completion" else []
    # The shared prefill's positions: those of the shortest prompt.
    s = prog.dim("s", dynamic="S", max=prompt_width) if share_prefill else None
    # A prompt of full width leaves max_new_tokens positions to generate at.
    t = prog.dim("t", dynamic="T", max=prompt_width + max_new_tokens - 1)
    per_prompt = [p, *outer]
    sequence = [*per_prompt, *group_dims, t]
    # A point's rows: one completion, or the groups of a microbatch's prompts.
    prompts = () if group_dims else (microbatch,)
    rows = () if group_dims else (microbatch * grpo.group,)
    real = config.dtype
    prompt = prog.input("prompt", (*prompts, prompt_width), "i64", domain=per_prompt)
    prompt_len = prog.input("prompt_len", prompts, "i64", domain=per_prompt)
    key = prog.input("prompt_key", prompts, "i64", domain=per_prompt) if keyed_reward else None

    def per_row(x: pf.TensorLike) -> pf.TensorLike:
        """A value per prompt (M,), repeated for each of its G rows."""
        if not rows:
            return x
        spread = x.reshape(microbatch, 1) + prog.constant(0, (microbatch, grpo.group), x.dtype)
        return spread.reshape(*rows)

    seed = prog.input("seed", (), "i64")
    # The reference is fixed (program inputs); with LoRA it is the base model.
    reference = GPT(prog, config, path="ref") if lora is None else None
    if i is not None:
        prog.iterate_parameters(i)
    policy = GPT(prog, config, lora=lora)
    # The behaviour policy: the weights `staleness` iterations back (the
    # starting ones before that), read through an access along i.
    behind = {}
    if staleness:
        for path, w in policy.trainable_parameters().items():
            lag = prog.recurrent(w.shape, w.dtype, domain=[i], name=f"{w.name}_behind")
            lag[i < staleness] = prog.initial_value(w)
            lag[i >= staleness] = w[i - staleness]
            behind[path] = lag

    # Generation. Positions are per sequence: a value over t alone would
    # run once for all sequences, outside the loop over i that they end in.
    # A microbatch's rows share the position: they are aligned.
    step_pos = prog.coordinate(t, domain=sequence)
    step_index = step_pos  # t itself, whatever the prefill
    whole = losses.grpo.whole_dim
    # A model scored teacher-forced runs every position it knows in one
    # product: its shared prefill too (the policy's then serves sampling).
    for model, option, forced in (
        (policy, "policy", teacher_forced_policy),
        (reference, "reference", teacher_forced_reference),
    ):
        if forced and (why := teacher_forced.unsupported(model)) is not None:
            raise pf.ProgramError(
                f"teacher_forced_{option}: {why}", hint=f"use teacher_forced_{option}=False"
            )
    policy_prefix = reference_prefix = behaviour_prefix = None
    if share_prefill:
        # Positions 0 .. first (the shortest prompt's last) run once per
        # prompt over s; t then counts the rows' steps from `first` on,
        # attending over the prefix before `first` and their own cache.
        first = (prompt_len.min() - 1).named("first_step")
        prefix_pos = prog.coordinate(s, domain=[*per_prompt, s]).named("prefix_pos")
        prefix_tok = pf.take(prompt, prefix_pos, axis=1).named("prefix_tok")
        s.until((prefix_pos >= first).named("prefix_done"))
        visible = prefix_pos < first

        def prefix_of(model: GPT, forced: bool = False):
            if forced:  # every prefix position at once, at the point of p (and i)
                return teacher_forced.prefix(
                    model, whole(prefix_tok, s), whole(prefix_pos, s), whole(visible, s),
                    grpo.group,
                )  # fmt: skip
            return model.prefix(prefix_tok, prefix_pos, s, visible, grpo.group)

        policy_prefix = prefix_of(policy, teacher_forced_policy)
        if staleness:
            with policy.weights_replaced(behind):
                behaviour_prefix = prefix_of(policy)
        if reference is None:
            with policy.without_adapters():
                reference_prefix = prefix_of(policy)
        else:
            reference_prefix = prefix_of(reference, teacher_forced_reference)
        step_pos = step_pos + first
    pos = step_pos.named("pos")
    at = pf.minimum(pos, prompt_width - 1)
    prompt_tok = per_row(pf.take(prompt, at, axis=len(prompts))).named("prompt_tok")
    row_len = per_row(prompt_len).named("row_len")  # its prompt's length, per row
    chosen = prog.recurrent(rows, "i64", domain=sequence, name="next")
    tok = prog.recurrent(rows, "i64", domain=sequence, name="tok")
    tok[t == 0] = prompt_tok
    tok[t > 0] = pf.where(pos < row_len, prompt_tok, chosen[t - 1])
    logits = policy(tok, pos, t, policy_prefix).named("logits")
    sampling = logits
    if staleness:  # the behaviour policy samples; the policy scores its tokens
        with policy.weights_replaced(behind):
            sampling = policy(tok, pos, t, behaviour_prefix).named("behaviour_logits")
    # The noise is drawn at the position, so both prefill modes sample alike.
    chosen[...] = pf.sample(
        sampling, seed=seed, temperature=grpo.temperature, at={"t": pos} if share_prefill else None
    )
    generating = (pos >= row_len - 1).named("generating")
    # A completion ends on EOS or at its max_new_tokens-th token, whatever
    # its prompt's length.
    last = pos >= row_len + (max_new_tokens - 2)
    hit = is_eos(chosen, ends_ids)
    ends = generating & (hit | last if hit is not None else last)
    if rows:
        # A microbatch steps until its last completion ends; a row that
        # ended earlier goes on computing, but its steps are out of the mask.
        running = prog.recurrent(rows, "i1", domain=sequence, name="running")
        running[t == 0] = prog.constant(1, rows, "i1")
        running[t > 0] = running[t - 1] & ~ends[t - 1]
        t.until((running & ~ends).astype("i64").sum().eq(0).named("done"))
        mask = (generating & running).astype(real)
    else:
        t.until(ends.named("done"))
        mask = generating.astype(real)

    def log_probs(scores: pf.TensorLike) -> pf.TensorLike:
        """The sampling distribution's log-probs: at the temperature."""
        if grpo.temperature != 1.0:
            scores = scores * (1.0 / grpo.temperature)
        return pf.log_softmax(scores)

    def chosen_of(log_p: pf.TensorLike) -> pf.TensorLike:
        if not rows:
            return pf.take(log_p, chosen)
        # Each row's chosen entry: a one-hot product (take() on rows would
        # give every row's choice in every row).
        vocab = prog.constant_array(np.arange(config.vocab, dtype=np.int64))
        picked = vocab.eq(chosen.reshape(*rows, 1)).astype(real)
        return (log_p * picked).sum(axis=-1)

    def forced_log_probs(model: GPT, prefix) -> pf.TensorLike:
        """(T, rows): `model`'s log-probs of the chosen tokens at every
        step at once, at the point of p (and i)."""
        return teacher_forced.sequence_log_probs(
            model, whole(tok, t), whole(chosen, t), whole(pos, t), prefix, grpo.temperature
        )

    # The sampled tokens' log-probs from the logits that chose them (the
    # gradient flows through these unless the policy scores teacher-forced),
    # and the reference's, step by step.
    policy_log_p = log_probs(logits)
    logp = chosen_of(policy_log_p).named("logp")
    # The sampling policy's log-probs: the loss's ratio is to them.
    old_logp = pf.stop_gradient(logp)
    if staleness:
        old_logp = pf.stop_gradient(chosen_of(log_probs(sampling))).named("behaviour_logp")
    if reference is None:  # LoRA: the base model is the policy without its adapters
        with policy.without_adapters():
            base_logits = policy(tok, pos, t, reference_prefix)
        ref_logp = chosen_of(log_probs(base_logits)).named("ref_logp")
    elif teacher_forced_reference:
        ref_steps = forced_log_probs(reference, reference_prefix)
        ref_steps = ref_steps.named("ref_sequence_logp")
        ref_logp = pf.take(ref_steps, step_index, axis=0).named("ref_logp")
    else:
        ref_logits = reference(tok, pos, t, reference_prefix)
        ref_logp = chosen_of(log_probs(ref_logits)).named("ref_logp")
    # The entropy of the distribution each token was sampled from (TRL's
    # `entropy`); only logged, so no gradient flows through it.
    entropy_tok = -(pf.exp(policy_log_p) * policy_log_p).sum(axis=-1)
    entropy_tok = pf.stop_gradient(entropy_tok).named("token_entropy")

    # Rewards on each finished completion, group-normalized advantages.
    real_type = np.dtype(numpy_dtype(real)).type
    group = grpo.group if rows else 0
    length = whole(mask, t).sum(axis=0).named("length")
    scorer = None
    udfs = {}
    if reward_model is not None:  # scored in the program by the imported module
        spec = as_reward_model(reward_model)
        scorer = BoundRewardModel(prog, spec, rows[0] if rows else None, ends_ids, max_new_tokens)
        first_step = row_len - 1  # a completion's first token is sampled there
        if share_prefill:  # t counts from the shared prefill's last position
            first_step = first_step - first
        rewards = scorer(whole(chosen, t), first_step, real)
        rewards = rewards.named("reward")
    else:
        if keyed_reward:
            score = _keyed_scorer(reward, real_type, ends_ids, max_new_tokens, group, share_prefill)
        else:
            score = _scorer(reward, real_type, ends_ids, max_new_tokens, group, share_prefill)
        udfs["reward"] = score
        rewards = prog.udf(
            score,
            [prompt, prompt_len, *([key] if keyed_reward else []), whole(chosen, t)],
            rows,
            real,
            domain=[*per_prompt, *group_dims],
            name="reward",
        )
    # An iteration's whole batch of a value over the prompts (and g).
    batch = tuple([slice(0, p.size), *outer, *(slice(0, g.size) for g in group_dims)])
    # The loss's per-token values: over t, a step per point; or, with the
    # policy teacher-forced, (T, rows) at the point of p (and i), read
    # whole so that its gradient is one product over all the steps.
    if teacher_forced_policy:
        loss_logp = forced_log_probs(policy, policy_prefix).named("sequence_logp")
        loss_old = pf.stop_gradient(loss_logp)  # one update per batch: ratio 1
        loss_ref = ref_steps if teacher_forced_reference else whole(ref_logp, t)
        loss_mask = whole(mask, t)

        def step_sum(x: pf.TensorLike) -> pf.TensorLike:
            return x.sum(axis=0)

    else:
        loss_logp, loss_old, loss_ref, loss_mask = logp, old_logp, ref_logp, mask

        def step_sum(x: pf.TensorLike) -> pf.TensorLike:
            return whole(x, t).sum(axis=0)

    delta = ref_logp - logp
    if rloo:
        # TRL's RLOO: the KL is a penalty in the reward, beta times the
        # completion's summed log-ratio (first order, the sampling policy's:
        # no gradient); the baseline is the other completions' mean.
        log_ratio = step_sum(pf.stop_gradient(loss_logp - loss_ref) * loss_mask)
        log_ratio = log_ratio.named("log_ratio")
        shaped = rewards - log_ratio * grpo.beta if grpo.beta else rewards
        if rows:
            advantage = losses.row_leave_one_out_advantages(shaped, grpo.group)
        else:
            advantage = losses.leave_one_out_advantages(shaped, group_dims[0])
        advantage = advantage.named("advantage")
        seq_logp = step_sum(loss_logp * loss_mask)
        per_sequence = losses.rloo_sequence_loss(seq_logp, advantage).named("sequence_loss")
        loss = _batch_mean(per_sequence, batch)
    else:
        scale = scale_rewards
        if scale_rewards == "batch":
            scale = losses.grpo.batch_std(rewards[batch]).named("batch_reward_std")
        if rows:
            advantage = losses.row_advantages(rewards, grpo.group, grpo.eps, scale)
        else:
            advantage = losses.group_advantages(rewards, group_dims[0], grpo.eps, scale)
        advantage = advantage.named("advantage")
        # The loss: one update per batch, so without staleness the
        # sampling policy is the policy itself (ratio 1, its gradient the
        # log-prob's); with it, the ratio to the behaviour policy, clipped.
        per_token = losses.grpo_token_loss(
            loss_logp, loss_old, loss_ref, advantage, grpo.clip, grpo.beta
        )
        loss = _aggregate(per_token, loss_mask, step_sum, batch, length, loss_type, max_new_tokens)
    loss = loss.named("loss")
    # The KL each trainer logs: GRPO's k3 estimator, RLOO's first-order
    # log-ratio (TRL's), per completion token.
    per_token_kl = -delta if rloo else pf.exp(delta) - delta - 1.0
    kl_tokens = whole(per_token_kl * mask, t).sum(axis=0)
    tokens_in_batch = pf.maximum(length[batch].sum(), 1.0)
    kl = (kl_tokens[batch].sum() / tokens_in_batch).named("kl")
    entropy_sums = whole(entropy_tok * mask, t).sum(axis=0)
    entropy = (entropy_sums[batch].sum() / tokens_in_batch).named("entropy")
    outputs = {"loss": loss, "kl": kl, "entropy": entropy, "reward": rewards, "length": length}
    for name, value in outputs.items():
        prog.output(name, value)

    params = policy.trainable_parameters()
    built = GRPOProgram(
        prog,
        policy,
        reference,
        prompt_width,
        udfs=udfs,
        group=grpo.group,
        eos=ends_ids,
        max_new_tokens=max_new_tokens,
        layout=layout,
        microbatch=microbatch,
        keyed=keyed_reward,
        reward_model=scorer,
        shared_prefill=share_prefill,
        staleness=staleness,
    )
    if optimizer is None:
        prog.output("tokens", chosen)
        if gradients:
            grads = autodiff.grad(loss, list(params.values()))
            for path, grad in zip(params, grads, strict=True):
                prog.output("g_" + path.replace(".", "_"), grad)
        return built
    built.training = optim.minimize(loss, params, optimizer, clip_norm)
    prog.output("grad_norm", built.training.grad_norm)  # before clipping
    built.training.add_outputs()
    return built


def _aggregate(per_token, mask, step_sum, batch, length, loss_type: str, max_new_tokens: int):
    """An iteration's loss from the per-token losses (see LOSS_TYPES);
    `step_sum` sums a per-token value over each completion's steps."""
    if loss_type == "grpo":
        per_sequence = step_sum(per_token * mask) / pf.maximum(step_sum(mask), 1.0)
        return _batch_mean(per_sequence.named("sequence_loss"), batch)
    token_sums = step_sum(per_token * mask).named("sequence_loss")
    if loss_type == "dr_grpo":
        return _batch_mean(token_sums, batch) * (1.0 / max_new_tokens)
    # every token of the batch alike
    return token_sums[batch].sum() / pf.maximum(length[batch].sum(), 1.0)


def _batch_mean(values, batch):
    """The mean of every element of an iteration's batch of `values`, as a
    sum over a sum of ones: two sums over the prompts, which
    pdg-split-over-workers can split over ranks (a mean divides by the
    extent it reads, which would be a rank's share)."""
    ones = pf.stop_gradient(values * 0.0 + 1.0)
    return values[batch].sum() / ones[batch].sum()


def _scorer(
    reward: RewardFn, kind, eos: tuple[int, ...], max_new_tokens: int, group: int, shared: bool
):
    """The reward udf: (prompt, its length, the chosen tokens along t) ->
    the reward of the completion; or, with rows (`group` > 0), (prompts (M,
    width), lengths (M,), tokens (T, M * G)) -> the reward of each row,
    row r a completion of prompt r // G (cut where it ended, as the steps
    past its end are not its). `shared`: the tokens start at the shortest
    prompt's last position (a shared prefill ran the ones before)."""

    def score(prompt_ids, prompt_length, tokens):
        if not group:
            n = int(prompt_length)
            return kind(reward(prompt_ids[:n], tokens[n - 1 :]))
        out = np.zeros(tokens.shape[1], kind)
        rows = _row_completions(prompt_length, tokens, eos, max_new_tokens, group, shared)
        for row, (prompt, n, done) in enumerate(rows):
            out[row] = reward(prompt_ids[prompt, :n], done)
        return out

    return score


def _keyed_scorer(
    reward, kind, eos: tuple[int, ...], max_new_tokens: int, group: int, shared: bool
):
    """The reward udf of a keyed program: (prompt, its length, its key, the
    chosen tokens along t) -> the reward of the completion, or with rows
    (`group` > 0) (prompts (M, width), lengths (M,), keys (M,), tokens (T,
    M * G)) -> each row's; `reward` scores all of a point's completions in
    one call."""

    def score(prompt_ids, prompt_length, key, tokens):
        if not group:
            n = int(prompt_length)
            ids = [prompt_ids[:n]]
            done = [_completion(tokens[n - 1 :], eos, max_new_tokens)]
            return kind(_checked(reward([int(key)], ids, done), 1)[0])
        keys, ids, done = [], [], []
        rows = _row_completions(prompt_length, tokens, eos, max_new_tokens, group, shared)
        for prompt, n, completion in rows:
            keys.append(int(key[prompt]))
            ids.append(prompt_ids[prompt, :n])
            done.append(completion)
        return np.asarray(_checked(reward(keys, ids, done), len(keys)), kind)

    return score


def _checked(values, count: int) -> list[float]:
    values = list(values)
    if len(values) != count:
        raise ValueError(f"the reward gave {len(values)} values for {count} completions")
    return values


def _row_completions(prompt_length, tokens, eos, max_new_tokens: int, group: int, shared: bool):
    """(prompt index, its length, the completion) of each row of `tokens`
    (T, M * G), row r a completion of prompt r // G (see _scorer). Where
    each row ends is found for all rows at once: a row at a time, finding
    its EOS cost more than the toy task's reward itself."""
    lengths = [int(n) for n in prompt_length]
    skipped = min(lengths) - 1 if shared else 0
    ended = np.isin(tokens, eos)
    for row in range(tokens.shape[1]):
        prompt = row // group
        n = lengths[prompt]
        start = n - 1 - skipped
        window = ended[start : start + max_new_tokens, row]
        first = int(window.argmax()) if window.size else 0
        stop = first + 1 if window.size and window[first] else window.size
        yield prompt, n, tokens[start : start + stop, row]


def _completion(tokens: np.ndarray, eos: tuple[int, ...], max_new_tokens: int) -> np.ndarray:
    """The completion in the tokens sampled from its prompt's last position
    on: up to and with the first EOS, and at most max_new_tokens (a row
    goes on sampling after its end while its microbatch runs)."""
    tokens = tokens[:max_new_tokens]
    ended = np.flatnonzero(np.isin(tokens, eos))
    return tokens[: ended[0] + 1] if ended.size else tokens
