"""Training inside the program: optimizers as recurrences over the
iteration dim, `w[i + 1] = update(w[i], grad[i])`.

    i = prog.dim("i", launch="I")
    prog.iterate_parameters(i)            # weights now live over [i]
    model = GPT(prog, config)
    loss = ...                            # a scalar per iteration
    training = optim.minimize(loss, model.parameters(), optim.Adam(lr=1e-3))
    training.add_outputs()                # final weights and optimizer state

A whole training run is then one program; `checkpoint` saves and restores
its state so that a resumed run computes what an uninterrupted one does.
"""

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .minimize import Training, clip_by_global_norm, minimize
from .optimizers import SGD, Adam, AdamW, Optimizer
from .schedules import constant, cosine, linear_warmup

__all__ = [
    "SGD",
    "Adam",
    "AdamW",
    "CheckpointError",
    "Optimizer",
    "Training",
    "clip_by_global_norm",
    "constant",
    "cosine",
    "linear_warmup",
    "load_checkpoint",
    "minimize",
    "save_checkpoint",
]
