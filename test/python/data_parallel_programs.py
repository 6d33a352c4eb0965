"""A small training loop written twice: on one process over the whole
batch, and data-parallel over a worker dim, each rank holding a share of
the batch and the ranks' gradients summed by pdg.all_reduce. Shared by the
single-process tests (test/python/...) and the ones run under mpiexec
(test/mpi/)."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf

IN, OUT = 8, 16
RATE = 0.1


def training_steps(world: bool) -> pf.Program:
    """Steps w[i] = w[i - 1] - RATE * g[i - 1], g the sum over the batch of
    a weight-sized value per example (squashed, so that it is no one
    contraction). With `world`, the batch is each rank's (dim b of B per
    rank) and g sums the ranks' partial sums: every rank then takes the same
    step, the one the whole batch gives."""
    prog = pf.Program("dp_steps" if world else "steps")
    i = prog.dim("i", launch="I")
    w_dim = prog.dim("w", world="W") if world else None
    b = prog.dim("b", launch="B")
    shard = [w_dim, b] if world else [b]
    x = prog.input("x", (IN,), "f32", domain=shard)
    w0 = prog.input("w0", (IN, OUT), "f32")
    wt = prog.recurrent((IN, OUT), "f32", domain=[i], name="wt")
    y = pf.tanh(pf.matmul(x, wt)).named("y")
    per_example = pf.tanh(pf.einsum("k,n->kn", x, y)).named("per_example")
    g = per_example[0 : b.size].sum(axis=0).named("g_local" if world else "g")
    if world:
        g = pf.all_reduce(g, over=w_dim).named("g")
    wt[i == 0] = w0
    wt[i > 0] = wt[i - 1] - g[i - 1] * RATE
    prog.output("wt", wt)
    return prog


def training_inputs(ranks: int, per_rank: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The whole batch (ranks * per_rank examples) and the first weights."""
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((ranks * per_rank, IN)).astype(np.float32),
        "w0": (0.3 * rng.standard_normal((IN, OUT))).astype(np.float32),
    }


def shard(inputs: dict[str, np.ndarray], rank: int, ranks: int) -> dict[str, np.ndarray]:
    """Rank `rank`'s inputs of the data-parallel program: its rows of the
    batch, with the worker dim's extent of 1 in front."""
    x = inputs["x"]
    n = len(x) // ranks
    return {"x": x[rank * n : (rank + 1) * n][None], "w0": inputs["w0"]}
