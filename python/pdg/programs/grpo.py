"""GRPO as one program: every iteration's generation, rewards, advantages,
loss, gradients and optimizer step in a single compiled program, with no
Python between iterations but the reward callback.

Dims: p (prompt, given at launch), i (iteration, given at launch; only
with an optimizer), g (completion of that prompt, static: the group) and t
(position in prompt + completion, dynamic: a completion ends after the step
that emits EOS, or after max_new_tokens tokens). Inputs: each
iteration's prompts `prompt[p, i]` (right-padded to prompt_width) and
`prompt_len[p, i]`, the sampling `seed`, the policy's weights (its
starting point with an optimizer) and the frozen reference's (`ref.*`).

At each position the policy's logits give the sampled token and its
log-prob; the loss differentiates those same logits, so no forward pass is
run again over the finished completions, and the reference model runs step
by step beside the policy. Completions end at their own step: the stores
along t hold the steps that ran (the compiler's growable stores), not the
bound. The reward is a host callback on each finished completion.

Without an optimizer the program is one iteration (no i) and outputs the
loss's gradient for every policy weight (`g_<path>`) and the sampled
`tokens`; with one, the weights and the optimizer state are recurrences
over i and the outputs are the final state (optim.Training). Either way it
outputs per iteration the `loss`, the mean per-token `kl` to the reference
(k3, over the completion tokens), and per completion ([p, i, g]) its `reward` and
`length` (completion tokens, EOS included).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import pdg.frontend as pf
from pdg import optim, rl
from pdg.frontend.dtypes import numpy_dtype
from pdg.nn import GPT, GPTConfig

# The reward of one completion: (prompt token ids, completion token ids up
# to and with EOS when it ended on one) -> a number.
RewardFn = Callable[[np.ndarray, np.ndarray], float]


@dataclass
class GRPOProgram:
    program: pf.Program
    policy: GPT
    reference: GPT
    prompt_width: int
    udfs: dict  # the host callbacks a run needs, by name
    training: optim.Training | None = None  # with an optimizer

    def inputs(
        self,
        weights: dict,
        reference_weights: dict,
        prompts: Sequence[Sequence[Sequence[int]]],
        seed: int,
        state: dict | None = None,
        start_step: int = 0,
    ) -> dict[str, np.ndarray]:
        """Program inputs: `prompts[i][p]` the token ids of prompt p at
        iteration i (one iteration without an optimizer), the policy's
        weights (and optimizer `state`, `start_step` when training) and the
        reference's, by path."""
        iterations = len(prompts)
        if iterations == 0 or not prompts[0]:
            raise ValueError("give at least one iteration of at least one prompt")
        if self.training is None and iterations != 1:
            raise ValueError("a program built without an optimizer runs one iteration")
        count = len(prompts[0])
        if any(len(batch) != count for batch in prompts):
            raise ValueError("every iteration needs the same number of prompts")
        padded = np.zeros((iterations, count, self.prompt_width), np.int64)
        lengths = np.zeros((iterations, count), np.int64)
        for it, batch in enumerate(prompts):
            for k, ids in enumerate(batch):
                if not 0 < len(ids) <= self.prompt_width:
                    raise ValueError(
                        f"prompt {k} of iteration {it} has {len(ids)} tokens; "
                        f"each needs 1 to prompt_width={self.prompt_width}"
                    )
                padded[it, k, : len(ids)] = ids
                lengths[it, k] = len(ids)
        if self.training is None:
            padded, lengths = padded[0], lengths[0]
            inputs = self.policy.inputs_from(weights)
        else:  # the program's dims: [p, i]
            padded, lengths = padded.transpose(1, 0, 2), lengths.T
            inputs = self.training.initial_inputs(weights, state, start_step=start_step)
        inputs.update(
            self.reference.inputs_from({f"ref.{k}": v for k, v in reference_weights.items()})
        )
        inputs.update(prompt=padded, prompt_len=lengths, seed=np.asarray(seed, np.int64))
        return inputs

    def symbols(self, inputs: dict) -> dict[str, int]:
        """The launch symbols of a run on `inputs`."""
        shape = inputs["prompt_len"].shape  # [p] or [p, i]
        if self.training is None:
            return {"P": shape[0]}
        return {"P": shape[0], "I": shape[1]}


def build_grpo(
    config: GPTConfig,
    grpo: rl.GRPOConfig,
    reward: RewardFn,
    *,
    eos: int,
    prompt_width: int,
    max_new_tokens: int,
    optimizer: optim.Optimizer | None = None,
    clip_norm: float | None = None,
) -> GRPOProgram:
    if not isinstance(grpo, rl.GRPOConfig):
        raise pf.ProgramError("build_grpo() needs an rl.GRPOConfig")
    if not callable(reward):
        raise pf.ProgramError("the reward must be a callable (prompt ids, completion ids) -> float")
    if max_new_tokens < 1 or prompt_width < 1:
        raise pf.ProgramError("prompt_width and max_new_tokens must be at least 1")
    prog = pf.Program("grpo")
    # p first: pdg-vectorize folds a leading dim (one step for all prompts).
    p = prog.dim("p", launch="P")
    i = prog.dim("i", launch="I") if optimizer is not None else None
    g = prog.dim("g", grpo.group)
    # A prompt of full width leaves max_new_tokens positions to generate at.
    t = prog.dim("t", dynamic="T", max=prompt_width + max_new_tokens - 1)
    outer = [i] if i is not None else []
    sequence = [p, *outer, g, t]
    real = config.dtype
    prompt = prog.input("prompt", (prompt_width,), "i64", domain=[p, *outer])
    prompt_len = prog.input("prompt_len", (), "i64", domain=[p, *outer])
    seed = prog.input("seed", (), "i64")
    reference = GPT(prog, config, path="ref")  # fixed: program inputs
    if i is not None:
        prog.iterate_parameters(i)
    policy = GPT(prog, config)

    # Generation. Positions are per sequence: a value over t alone would
    # run once for all sequences, outside the loop over i that they end in.
    pos = prog.coordinate(t, domain=sequence).named("pos")
    prompt_tok = pf.take(prompt, pf.minimum(pos, prompt_width - 1), axis=0).named("prompt_tok")
    chosen = prog.recurrent((), "i64", domain=sequence, name="next")
    tok = prog.recurrent((), "i64", domain=sequence, name="tok")
    tok[t == 0] = prompt_tok
    tok[t > 0] = pf.where(pos < prompt_len, prompt_tok, chosen[t - 1])
    logits = policy(tok, pos, t).named("logits")
    chosen[...] = pf.sample(logits, seed=seed, temperature=grpo.temperature)
    generating = (pos >= prompt_len - 1).named("generating")
    # A completion ends on EOS or at its max_new_tokens-th token, whatever
    # its prompt's length.
    last = pos >= prompt_len + (max_new_tokens - 2)
    t.until((generating & (chosen.eq(eos) | last)).named("done"))

    def logp_of(scores: pf.TensorLike) -> pf.TensorLike:
        if grpo.temperature != 1.0:
            scores = scores * (1.0 / grpo.temperature)
        return pf.take(pf.log_softmax(scores), chosen)

    # The sampled tokens' log-probs from the logits that chose them (the
    # gradient flows through these), and the reference's, step by step.
    logp = logp_of(logits).named("logp")
    ref_logp = logp_of(reference(tok, pos, t)).named("ref_logp")

    # Rewards on each finished completion, group-normalized advantages.
    kind = np.dtype(numpy_dtype(real)).type

    def score(prompt_ids, prompt_length, tokens):
        n = int(prompt_length)
        return kind(reward(prompt_ids[:n], tokens[n - 1 :]))

    whole = rl.grpo.whole_dim
    rewards = prog.udf(
        score,
        [prompt, prompt_len, whole(chosen, t)],
        (),
        real,
        domain=[p, *outer, g],
        name="reward",
    )
    advantage = rl.group_advantages(rewards, g, grpo.eps).named("advantage")

    # The loss: one update per batch, so the sampling policy is the policy
    # itself (ratio 1, its gradient the log-prob's).
    mask = generating.astype(real)
    per_token = rl.grpo_token_loss(
        logp, pf.stop_gradient(logp), ref_logp, advantage, grpo.clip, grpo.beta
    )
    per_sequence = rl.masked_sequence_mean(per_token, mask, t).named("sequence_loss")
    batch = tuple([slice(0, p.size), *outer, slice(0, grpo.group)])
    loss = per_sequence[batch].mean().named("loss")
    length = whole(mask, t).sum().named("length")
    delta = ref_logp - logp
    kl_tokens = whole((pf.exp(delta) - delta - 1.0) * mask, t).sum()
    kl = (kl_tokens[batch].sum() / pf.maximum(length[batch].sum(), 1.0)).named("kl")
    for name, value in (("loss", loss), ("kl", kl), ("reward", rewards), ("length", length)):
        prog.output(name, value)

    params = policy.parameters()
    udfs = {"reward": score}
    if optimizer is None:
        prog.output("tokens", chosen)
        for path, grad in zip(params, pf.grad(loss, list(params.values())), strict=True):
            prog.output("g_" + path.replace(".", "_"), grad)
        return GRPOProgram(prog, policy, reference, prompt_width, udfs)
    training = optim.minimize(loss, params, optimizer, clip_norm)
    training.add_outputs()
    return GRPOProgram(prog, policy, reference, prompt_width, udfs, training)
