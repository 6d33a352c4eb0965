"""Supervised training of a decoder model (any pdg.nn.DecoderConfig), as
one program.

Dims: i (training iteration, given at launch), b (sequence in the batch)
and t (position, static). At iteration i the model reads the batch
`tokens[i, b, t]` (teacher forcing: every position at once) and predicts
`targets[i, b, t]`; the loss is the mean negative log-likelihood, and the
optimizer turns its gradient into the weights of iteration i + 1. The whole
run (forward, backward, update, every iteration) is one program.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import pdg.frontend as pf
from pdg import optim
from pdg.nn import GPT, DecoderConfig, LoraSpec
from pdg.nn.tensor_parallel import Shards, vocab_parallel_nll

from .sequences import check_positions


@dataclass
class TrainProgram:
    program: pf.Program
    model: GPT
    training: optim.Training
    batch: int
    length: int
    masked: bool = False  # takes `loss_mask`: which targets count
    shards: Shards | None = None  # tensor parallel: the worker dim and its ranks

    def inputs(
        self, weights, tokens, targets, state=None, start_step=0, loss_mask=None, comm=None
    ) -> dict:
        """Program inputs: weights by path, token and target ids shaped
        (iterations, batch, length), optimizer state (zeros by default) and,
        for a masked program, the loss mask (1.0 where a target counts).

        A program built with `tensor_parallel=n` takes whole weights and
        state and cuts them: with `comm` (the MPI communicator of n ranks
        the compiled program runs on) into this rank's share, without it
        into every rank's share for the interpreter."""
        if self.shards is not None:
            rank = self.shards.rank_of(comm)
            weights = {p: self.model.share(p, np.asarray(w), rank) for p, w in weights.items()}
            state = {
                p: {slot: self.model.share(p, np.asarray(v), rank) for slot, v in slots.items()}
                for p, slots in (state or {}).items()
            }
        elif comm is not None:
            raise ValueError("comm= cuts the weights of a program built with tensor_parallel=")
        tokens, targets = np.asarray(tokens, np.int64), np.asarray(targets, np.int64)
        if tokens.ndim != 3 or tokens.shape[1:] != (self.batch, self.length):
            raise ValueError(
                f"tokens must be (iterations, {self.batch}, {self.length}), got {tokens.shape}"
            )
        if targets.shape != tokens.shape:
            raise ValueError(f"targets {targets.shape} differ from tokens {tokens.shape}")
        # The frozen weights (LoRA's base), then the trained ones.
        out = self.model.inputs_from(weights) if self.model.lora is not None else {}
        out.update(self.training.initial_inputs(weights, state, start_step))
        out["tokens"], out["targets"] = tokens, targets
        if self.masked != (loss_mask is not None):
            raise ValueError("pass a loss_mask exactly when the program is built masked")
        if loss_mask is not None:
            dtype = np.float64 if self.model.config.dtype == "f64" else np.float32
            out["loss_mask"] = np.asarray(loss_mask, dtype).reshape(tokens.shape)
        return out

    def final_state(self, outputs, comm=None):
        """(weights, optimizer state) by path after the last iteration, whole:
        a tensor-parallel program's shares joined (on a compiled rank, by an
        all-gather over `comm`, so every rank returns the whole model)."""
        weights, state = self.training.final_state(outputs)
        if self.shards is None:
            return weights, state

        def whole(path, arr):
            if comm is not None and path in self.model.split_axes():
                arr = np.concatenate(comm.allgather(arr))  # (1, *share) per rank
            return self.model.whole(path, arr)

        weights = {p: whole(p, w) for p, w in weights.items()}
        state = {p: {k: whole(p, v) for k, v in slots.items()} for p, slots in state.items()}
        return weights, state


def copy_batches(iterations: int, batch: int, length: int, vocab: int, seed=0, start=0):
    """The copy task: sequences of `length // 2` random tokens (1 .. vocab-1)
    repeated, as (tokens, next tokens), each (iterations, batch, length),
    for global steps start .. start + iterations - 1. Each step's batch
    depends on the seed and its number only, so a run resumed at `start`
    sees the batches an uninterrupted one would."""
    half = length // 2
    tokens = np.empty((iterations, batch, 2 * half), np.int64)
    for k in range(iterations):
        rows = np.random.default_rng([seed, start + k]).integers(1, vocab, size=(batch, half))
        tokens[k] = np.concatenate([rows, rows], axis=1)
    return tokens, np.roll(tokens, -1, axis=2)


def build_train_lm(
    config: DecoderConfig,
    batch: int,
    length: int,
    optimizer: optim.Optimizer,
    clip_norm: float | None = None,
    name: str = "train_lm",
    masked: bool = False,
    lora: LoraSpec | None = None,
    tensor_parallel: int | None = None,
    split_vocab: bool = False,
) -> TrainProgram:
    """`lora`: only the adapters it adds train (pdg.nn.lora); `weights`
    then hold the base model and the adapters. `tensor_parallel=n`: the
    model's heads and MLP units are split over n MPI ranks (worker dim `w`,
    world `W`; pdg.nn.tensor_parallel), every rank reads the same batch,
    and each updates its share of the split weights and the whole of the
    others; the gradients cross the ranks through the collectives' rules
    (pdg.autodiff). `split_vocab` also splits the embedding and the head
    over the vocabulary (the loss's log-softmax then all-reduces a few
    scalars per token; pdg.nn.tensor_parallel.vocab_parallel_nll)."""
    check_positions(config, length, "the sequence length")
    prog = pf.Program(name)
    i = prog.dim("i", launch="I")
    b = prog.dim("b", batch)
    t = prog.dim("t", length)
    shards = None
    if tensor_parallel is not None:
        w = prog.dim("w", world="W", max=tensor_parallel)
        shards = Shards(w, tensor_parallel, vocab=split_vocab)
    elif split_vocab:
        raise pf.ProgramError("split_vocab splits over ranks", hint="pass tensor_parallel=n too")
    prog.iterate_parameters(i)
    model = GPT(prog, config, lora=lora, shards=shards)
    tokens = prog.input("tokens", (), "i64", domain=[i, b, t])
    targets = prog.input("targets", (), "i64", domain=[i, b, t])
    logits = model(tokens, prog.coordinate(t), t)
    if model.vocab_split:
        nll = vocab_parallel_nll(logits, targets, shards).named("nll")
    else:
        nll = (-pf.take(pf.log_softmax(logits), targets)).named("nll")
    if masked:  # the mean over the targets that count
        mask = prog.input("loss_mask", (), config.dtype, domain=[i, b, t])
        total = (nll * mask)[i, 0:batch, 0:length].sum()
        loss = (total / pf.maximum(mask[i, 0:batch, 0:length].sum(), 1.0)).named("loss")
    else:
        loss = nll[i, 0:batch, 0:length].mean().named("loss")
    training = optim.minimize(loss, model.trainable_parameters(), optimizer, clip_norm)
    prog.output("loss", loss)
    prog.output("grad_norm", training.grad_norm)  # before clipping
    training.add_outputs()
    return TrainProgram(prog, model, training, batch, length, masked, shards)
