"""Batched autoregressive decoding with a decoder model (any of pdg.nn's
DecoderConfig: GPT-2, Llama, Mistral, Qwen), as one program.

Dims: b (batch, given at launch) and t (position, dynamic: sequence b ends
after the step that emits an EOS id once its prompt is consumed, or at
`max_len`).
At position t the fed token is the prompt's while t < prompt_len[b] and the
previous prediction afterwards; `next[b, t]` is the model's choice for
position t + 1 (greedy, or sampled with a seeded counter-based generator).
Prompts of different lengths share the batch: each sequence reads its own
prompt and stops on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import pdg.frontend as pf
from pdg.nn import GPT, DecoderConfig, Shards

from .sequences import check_positions, eos_ids, is_eos


@dataclass
class DecodeProgram:
    program: pf.Program
    model: GPT
    prompt_width: int
    # Handles for programs built on top (reference models, rewards, losses):
    batch: pf.Dim | None = None  # b
    step: pf.Dim | None = None  # t
    position: pf.RecurrentTensor | None = None  # t, as an i64 scalar
    token: pf.RecurrentTensor | None = None  # the token fed at [b, t]
    next_token: pf.RecurrentTensor | None = None  # the choice at [b, t]
    logits: pf.RecurrentTensor | None = None  # the policy's logits at [b, t]
    response_limit: bool = False  # takes an input `limit` [b]: a cap on T per sequence
    seed_input: bool = False  # takes an input `seed`: the sampling seed of a run
    reference: GPT | None = None  # the reference model, weights `ref.*` (RL)
    shards: Shards | None = None  # tensor parallel: the worker dim and its ranks

    def inputs(
        self,
        weights: dict,
        prompts: list,
        limits: list[int] | None = None,
        seed=None,
        reference_weights: dict | None = None,
        comm=None,
    ) -> dict[str, np.ndarray]:
        """Program inputs: model weights (by path), the batch's prompts (each
        a non-empty list of token ids) and, for a program built with
        `response_limit`, each sequence's cap on T.

        A program built with `tensor_parallel=n` takes the whole weights
        and cuts them: with `comm` (the MPI communicator the compiled
        program runs on, which must have n ranks) into this rank's share,
        without it into every rank's share for the interpreter."""
        rank = self._rank(comm)
        if not prompts or any(len(p) == 0 for p in prompts):
            raise ValueError("every prompt needs at least one token")
        for k, p in enumerate(prompts):
            if len(p) > self.prompt_width:
                raise ValueError(
                    f"prompt {k} has {len(p)} tokens, more than prompt_width={self.prompt_width}"
                )
        padded = np.zeros((len(prompts), self.prompt_width), np.int64)
        for i, p in enumerate(prompts):
            padded[i, : len(p)] = p
        inputs = self.model.inputs_from(weights, rank)
        inputs["prompt"] = padded
        inputs["prompt_len"] = np.array([len(p) for p in prompts], np.int64)
        if self.response_limit:
            if limits is None or len(limits) != len(prompts):
                raise ValueError("this program takes one response limit per prompt")
            inputs["limit"] = np.array(limits, np.int64)
        elif limits is not None:
            raise ValueError("build the program with response_limit=True to pass limits")
        if self.seed_input:
            if seed is None:
                raise ValueError("this program samples with a seed given at each run")
            inputs["seed"] = np.asarray(seed, np.int64)
        elif seed is not None:
            raise ValueError('build the program with sample_seed="input" to pass a seed')
        if self.reference is not None:
            if reference_weights is None:
                raise ValueError("this program runs a reference model: pass its weights")
            inputs.update(
                self.reference.inputs_from(
                    {f"ref.{k}": v for k, v in reference_weights.items()}, rank
                )
            )
        elif reference_weights is not None:
            raise ValueError("build the program with reference=True to pass reference weights")
        return inputs

    def _rank(self, comm) -> int | None:
        if comm is None:
            return None
        if self.shards is None:
            raise ValueError("comm= cuts the weights of a program built with tensor_parallel=")
        return self.shards.rank_of(comm)


def build_decode(
    config: DecoderConfig,
    *,
    eos: int | Sequence[int] | None,
    max_len: int,
    prompt_width: int = 16,
    max_batch: int = 64,
    sample_seed: int | str | None = None,
    temperature: float = 1.0,
    response_limit: bool = False,
    output_logits: bool = True,
    log_probs: bool = False,
    reference: bool = False,
    tensor_parallel: int | None = None,
) -> DecodeProgram:
    """`eos`: the id, or ids, that end a sequence (None: only max_len or
    the response limit ends one). With `log_probs`, also outputs
    `logp[b, t]`, the log-probability of the chosen token under the
    sampling distribution (logits / temperature);
    with `reference`, a second model (weights `ref.*`) runs on the same
    tokens at each step and `ref_logp[b, t]` is its log-probability of the
    chosen token: an RL update's reference term, computed during generation
    instead of in a second pass over the finished sequences.
    With `tensor_parallel=n`, the model's heads and MLP units are split
    over n MPI ranks (pdg.nn.tensor_parallel; worker dim `w`, world `W`):
    every rank runs the program on the same prompts with its share of the
    weights, and every rank gets the same tokens."""
    ends = eos_ids(eos)
    check_positions(config, max_len, "max_len")
    prog = pf.Program("decode")
    b = prog.dim("b", launch="B", max=max_batch)
    t = prog.dim("t", dynamic="T", max=max_len)
    shards = None
    if tensor_parallel is not None:
        shards = Shards(prog.dim("w", world="W", max=tensor_parallel), tensor_parallel)
    model = GPT(prog, config, shards=shards)
    prompt = prog.input("prompt", (prompt_width,), "i64", domain=[b])
    prompt_len = prog.input("prompt_len", (), "i64", domain=[b])
    pos = prog.coordinate(t).named("pos")

    prompt_tok = pf.take(prompt, pf.minimum(pos, prompt_width - 1), axis=0).named("prompt_tok")
    nxt = prog.recurrent((), "i64", domain=[b, t], name="next")
    tok = prog.recurrent((), "i64", domain=[b, t], name="tok")
    tok[t == 0] = prompt_tok
    tok[t > 0] = pf.where(pos < prompt_len, prompt_tok, nxt[t - 1])

    logits = model(tok, pos, t).named("logits")
    if sample_seed is None:
        nxt[...] = pf.argmax(logits)
    else:
        # "input": the seed is the program input `seed`, given at each run.
        seed = prog.input("seed", (), "i64") if sample_seed == "input" else sample_seed
        nxt[...] = pf.sample(logits, seed=seed, temperature=temperature)
    generating = pos >= prompt_len - 1
    hit = is_eos(nxt, ends)
    done = generating & hit if hit is not None else None
    if response_limit:
        # A per-sequence cap on T given when run (max_len stays the bound).
        limit = prog.input("limit", (), "i64", domain=[b])
        capped = pos + 1 >= limit
        done = capped if done is None else done | capped
    if done is None:  # no EOS and no cap: every sequence runs to max_len
        done = pos + 1 >= max_len
    t.until(done.named("done"))
    prog.output("tokens", nxt)
    if output_logits:
        prog.output("logits", logits)

    def chosen_logp(scores):
        if temperature != 1.0:
            scores = scores * (1.0 / temperature)
        return pf.take(pf.log_softmax(scores), nxt)

    if log_probs:
        prog.output("logp", chosen_logp(logits))
    ref_model = None
    if reference:
        ref_model = GPT(prog, config, path="ref", shards=shards)
        prog.output("ref_logp", chosen_logp(ref_model(tok, pos, t)))
    return DecodeProgram(
        prog,
        model,
        prompt_width,
        b,
        t,
        pos,
        tok,
        nxt,
        logits,
        response_limit,
        seed_input=sample_seed == "input",
        reference=ref_model,
        shards=shards,
    )
