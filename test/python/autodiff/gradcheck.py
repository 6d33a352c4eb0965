"""Gradient checks: the same function written with pdg's frontend and with
PyTorch, differentiated by pdg.autodiff.grad (run by the interpreter, float64) and by
torch.autograd (float64), compared elementwise."""

from __future__ import annotations

import numpy as np
import pdg.frontend as pdg
import torch
from pdg.autodiff import grad
from pdg.interpreter import interpret

RTOL = 1e-8  # float64, relative to the largest entry of the gradient


def relative_error(got, expected) -> float:
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    scale = max(np.abs(expected).max(initial=0.0), 1e-12)
    return float(np.abs(got - expected).max(initial=0.0) / scale)


def check_grads(build, reference, arrays: dict, dims=None, domains=None, symbols=None):
    """`build(v)` returns the loss (a scalar per point) from `v`, which maps
    each name of `arrays` to a pdg input (over `domains[name]`, default no
    dim) and each name of `dims` to a dim (an int: static size, a str: the
    launch symbol). `reference(v)` returns the torch loss summed over all
    points from float64 leaves. Checks the gradient of every input."""
    prog = pdg.Program("check")
    v = {}
    for name, size in (dims or {}).items():
        v[name] = prog.dim(name, size) if isinstance(size, int) else prog.dim(name, launch=size)
    inputs = {}
    for name, arr in arrays.items():
        domain = [v[d] for d in (domains or {}).get(name, [])]
        inputs[name] = prog.input(name, arr.shape[len(domain) :], "f64", domain=domain)
    v.update(inputs)
    loss = build(v)
    grads = grad(loss, list(inputs.values()))
    for name, g in zip(inputs, grads, strict=True):
        prog.output(f"d_{name}", g)
    result = interpret(prog.build(), arrays, symbols=symbols or {})
    leaves = {k: torch.tensor(a, requires_grad=True) for k, a in arrays.items()}
    reference(leaves).backward()
    for name, arr in arrays.items():
        expected = leaves[name].grad
        expected = np.zeros(arr.shape) if expected is None else expected.numpy()
        err = relative_error(result.outputs[f"d_{name}"], expected)
        assert err < RTOL, f"d_{name}: relative error {err:.3g}"
