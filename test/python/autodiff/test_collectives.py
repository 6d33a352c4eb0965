"""Gradients through the collectives (pdg.autodiff.collectives): the
adjoint of an all-reduce's or a broadcast's input, and a value read on
every rank whose adjoint is summed over the ranks by one all-reduce.
Checked in float64 against torch autograd on the same sums written out
rank by rank (the interpreter runs every rank in one process)."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pf
import pytest
from pdg.autodiff import grad
from pdg.interpreter import interpret

torch = pytest.importorskip("torch")

RANKS, BATCH = 3, 2


def test_data_parallel_the_replicated_weight_gets_every_ranks_gradient():
    """loss = all_reduce over w of sum over b of tanh(x[w, b] @ p)."""
    prog = pf.Program("dp")
    w = prog.dim("w", world="W")
    b = prog.dim("b", BATCH)
    x = prog.input("x", (4,), "f64", domain=[w, b])
    p = prog.input("p", (4, 2), "f64")
    local = pf.tanh(x @ p).sum()[w, 0:BATCH].sum()
    loss = pf.all_reduce(local, over=w).named("loss")
    (dp,) = grad(loss, [p])
    prog.output("loss", loss)
    prog.output("dp", dp)
    text = prog.to_mlir()
    assert text.count("pdg.all_reduce sum") == 2  # the loss, and p's gradient once

    rng = np.random.default_rng(0)
    xs, ps = rng.standard_normal((RANKS, BATCH, 4)), rng.standard_normal((4, 2))
    got = interpret(prog.build(), {"x": xs, "p": ps}, symbols={"W": RANKS}).outputs
    pt = torch.tensor(ps, requires_grad=True)
    want = torch.tanh(torch.tensor(xs) @ pt).sum()
    want.backward()
    np.testing.assert_allclose(got["loss"], want.item(), rtol=1e-12)
    np.testing.assert_allclose(got["dp"], pt.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_tensor_parallel_split_weights_and_the_replicated_input():
    """h = all_reduce over w of tanh(x @ a[w]) @ c[w] (a column- then a
    row-split product), z = broadcast of x @ a[w] from rank 1; x is read
    on every rank, so its gradient sums the ranks' parts."""
    prog = pf.Program("tp")
    w = prog.dim("w", world="W")
    x = prog.input("x", (3, 4), "f64")
    a = prog.input("a", (4, 3), "f64", domain=[w])
    c = prog.input("c", (3, 4), "f64", domain=[w])
    h = pf.all_reduce(pf.tanh(x @ a) @ c, over=w)
    z = pf.broadcast(x @ a, over=w, root=1)
    loss = ((h * h).sum() + (z * z).sum()).named("loss")
    for name, g in zip("xac", grad(loss, [x, a, c]), strict=True):
        prog.output(f"d{name}", g)

    rng = np.random.default_rng(1)
    arrays = {
        "x": rng.standard_normal((3, 4)),
        "a": rng.standard_normal((RANKS, 4, 3)),
        "c": rng.standard_normal((RANKS, 3, 4)),
    }
    got = interpret(prog.build(), arrays, symbols={"W": RANKS}).outputs
    t = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    ht = sum(torch.tanh(t["x"] @ t["a"][r]) @ t["c"][r] for r in range(RANKS))
    zt = t["x"] @ t["a"][1]
    ((ht * ht).sum() + (zt * zt).sum()).backward()
    for name in "xac":
        np.testing.assert_allclose(
            got[f"d{name}"], t[name].grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=name
        )
    assert np.abs(got["da"][0]).max() > 0 and np.abs(got["da"][2]).max() > 0
