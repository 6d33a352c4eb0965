"""Layers: Module (weights under a path), Linear, Embedding, LayerNorm,
RMSNorm, and the activations the MLPs (mlp.py) apply."""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextlib import contextmanager

import numpy as np

import pdg.frontend as pf
from pdg.frontend import Program, ProgramError, TensorLike


class Module:
    """A set of weights (program inputs) under a path, e.g. 'h0.attn.q'."""

    def __init__(self, program: Program, path: str):
        self.program = program
        self.path = path
        self.params: dict[str, pf.RecurrentTensor] = {}
        self.frozen: set[str] = set()  # paths created inside program.frozen_parameters()
        # path -> (axis, ranks) of a weight split over a worker dim (tensor_parallel.py)
        self.splits: dict[str, tuple[int, int]] = {}
        self.children: list[Module] = []

    def param(self, name: str, shape, dtype="f32") -> pf.RecurrentTensor:
        path = f"{self.path}.{name}" if self.path else name
        value = self.program.parameter(path.replace(".", "_"), shape, dtype)
        self.params[path] = value
        if self.program.parameters_frozen:
            self.frozen.add(path)
        return value

    def split_param(self, name: str, shape, dtype, shards, axis: int) -> pf.RecurrentTensor:
        """A weight of whole shape `shape` split along `axis` over the
        ranks of `shards` (a tensor_parallel.Shards): a parameter over the
        worker dim whose point is one rank's share."""
        path = f"{self.path}.{name}" if self.path else name
        local = list(shape)
        local[axis] = shards.local(
            shape[axis], f"columns of '{path}'" if axis else f"rows of '{path}'"
        )
        value = self.program.parameter(path.replace(".", "_"), local, dtype, domain=[shards.dim])
        self.params[path] = value
        self.splits[path] = (axis, shards.count)
        if self.program.parameters_frozen:
            self.frozen.add(path)
        return value

    def split_axes(self) -> dict[str, tuple[int, int]]:
        """(axis, ranks) of every split weight under this module, by path."""
        out = dict(self.splits)
        for c in self.children:
            out.update(c.split_axes())
        return out

    def whole_shapes(self) -> dict[str, tuple[int, ...]]:
        """Every weight's shape before any split (what `inputs_from` takes), by path."""
        splits = self.split_axes()
        out = {}
        for path, value in self.parameters().items():
            shape = list(value.shape)
            if path in splits:
                axis, ranks = splits[path]
                shape[axis] *= ranks
            out[path] = tuple(shape)
        return out

    def child(self, module: Module) -> Module:
        self.children.append(module)
        return module

    def parameters(self) -> dict[str, pf.RecurrentTensor]:
        """Every weight of the module and its children, by path."""
        out = dict(self.params)
        for c in self.children:
            out.update(c.parameters())
        return out

    def trainable_parameters(self) -> dict[str, pf.RecurrentTensor]:
        """The weights an optimizer updates: all but the frozen ones."""
        out = {p: v for p, v in self.params.items() if p not in self.frozen}
        for c in self.children:
            out.update(c.trainable_parameters())
        return out

    @contextmanager
    def weights_replaced(self, by_path: Mapping[str, TensorLike]):
        """Calls inside compute with other values for some weights (by
        path; e.g. an earlier iteration's, for a policy that samples with
        stale weights); the module's own weights are back after."""
        swapped = []
        for m in self.modules():
            for path, value in m.params.items():
                if path in by_path:
                    swapped += [(m, k, held) for k, held in vars(m).items() if held is value]
        for m, attr, held in swapped:
            setattr(m, attr, by_path[next(p for p, v in m.params.items() if v is held)])
        try:
            yield
        finally:
            for m, attr, held in swapped:
                setattr(m, attr, held)

    def modules(self):
        """This module and every module under it."""
        yield self
        for c in self.children:
            yield from c.modules()

    def inputs_from(
        self, weights: Mapping[str, np.ndarray], rank: int | None = None
    ) -> dict[str, np.ndarray]:
        """Program inputs from arrays keyed by parameter path; checks that
        every weight is present with the declared shape.

        Weights split over ranks (tensor_parallel.py) are given whole and
        cut here: with `rank`, into that rank's share (with the leading 1
        of a compiled rank's point along the worker dim), else into every
        rank's share stacked (the interpreter, which runs all ranks)."""
        inputs = {}
        shapes = self.whole_shapes()
        for path, value in self.parameters().items():
            if path not in weights:
                raise ProgramError(f"missing weight '{path}'", loc=value.loc)
            arr = np.asarray(weights[path])
            expected = shapes[path]
            if tuple(arr.shape) != expected:
                raise ProgramError(
                    f"weight '{path}' has shape {tuple(arr.shape)}, expected {expected}",
                    loc=value.loc,
                )
            name = self.program.initial_value(value).definition.name
            # No copy when the dtype is already right (a model's loaded weights).
            arr = np.asarray(arr, pf.dtypes.numpy_dtype(value.dtype))
            inputs[name] = self.share(path, arr, rank)
        return inputs

    def share(self, path: str, arr: np.ndarray, rank: int | None = None) -> np.ndarray:
        """A whole weight (or optimizer state) as the program takes it: a
        split one cut into `rank`'s share with a leading 1 (a compiled rank's
        point along the worker dim), or into every rank's share stacked
        (rank None: the interpreter, which runs all ranks); others as given."""
        split = self.split_axes().get(path)
        if split is None:
            return arr
        axis, ranks = split
        shares = np.split(arr, ranks, axis=axis)
        return np.stack(shares) if rank is None else np.ascontiguousarray(shares[rank][None])

    def whole(self, path: str, shares: np.ndarray) -> np.ndarray:
        """share()'s inverse for every rank's shares stacked (W, *share)."""
        split = self.split_axes().get(path)
        if split is None:
            return shares
        return np.concatenate(list(shares), axis=split[0])

    def init_weights(self, seed: int = 0, scale: float = 0.02) -> dict[str, np.ndarray]:
        """Random weights (normal * scale; norms' gains 1, biases 0), by path."""
        rng = np.random.default_rng(seed)
        out = {}
        shapes = self.whole_shapes()
        for path, value in self.parameters().items():
            dtype = pf.dtypes.numpy_dtype(value.dtype)
            shape = shapes[path]
            leaf = path.rsplit(".", 1)[-1]
            if leaf in ("g", "gain"):
                out[path] = np.ones(shape, dtype)
            elif leaf in ("b", "bias"):
                out[path] = np.zeros(shape, dtype)
            else:
                out[path] = (rng.standard_normal(shape) * scale).astype(dtype)
        return out


def check_weight_dtype(dtype: str, weight_dtype: str | None) -> str:
    """The dtype a module stores its matrices in: `dtype` (None), or bf16
    for f32 models (half the bytes a step reads; products still widen
    them to f32 and sum in f32)."""
    if weight_dtype is None or weight_dtype == dtype:
        return dtype
    if weight_dtype != "bf16" or dtype != "f32":
        raise ProgramError(
            f"weights in {weight_dtype} for a model computing in {dtype}",
            hint="weight_dtype='bf16' goes with dtype='f32'",
        )
    return weight_dtype


class Linear(Module):
    """y = x @ w + b, with w of shape (d_in, d_out); with a low-rank
    adapter (add_adapter), y = x @ w + scale * (x @ lora_a) @ lora_b + b.
    With weight_dtype='bf16', w is stored in bf16 (b and the adapters stay
    in `dtype`) and x @ w sums the widened products in f32."""

    def __init__(
        self,
        program,
        path,
        d_in: int,
        d_out: int,
        bias: bool = True,
        dtype="f32",
        weight_dtype: str | None = None,
    ):
        super().__init__(program, path)
        self.dtype = dtype
        self.w = self.param("w", (d_in, d_out), check_weight_dtype(dtype, weight_dtype))
        self.b = self.param("b", (d_out,), dtype) if bias else None
        self.adapter: tuple[pf.RecurrentTensor, pf.RecurrentTensor, float] | None = None
        self.adapter_enabled = True

    def add_adapter(self, rank: int, scale: float) -> None:
        """LoRA: parameters lora_a (d_in, rank) and lora_b (rank, d_out)."""
        d_in, d_out = self.w.shape
        dtype = self.dtype
        a = self.param("lora_a", (d_in, rank), dtype)
        b = self.param("lora_b", (rank, d_out), dtype)
        self.adapter = (a, b, scale)

    def __call__(self, x: TensorLike) -> TensorLike:
        y = x @ self.w
        if self.adapter is not None and self.adapter_enabled:
            # Through the rank first: two thin products, never d_in x d_out.
            a, b, scale = self.adapter
            y = y + ((x @ a) @ b) * scale
        return y + self.b if self.b is not None else y


class Embedding(Module):
    """Rows of a (vocab, d) table, looked up by integer ids. With
    weight_dtype='bf16' the table is stored in bf16 and a looked-up row is
    widened to `dtype`."""

    def __init__(
        self, program, path, vocab: int, d: int, dtype="f32", weight_dtype: str | None = None
    ):
        super().__init__(program, path)
        self.dtype = dtype
        self.table = self.param("w", (vocab, d), check_weight_dtype(dtype, weight_dtype))

    def __call__(self, ids: TensorLike) -> TensorLike:
        rows = pf.take(self.table, ids, axis=0)
        return rows if self.table.dtype == self.dtype else rows.astype(self.dtype)


def tied_logits(h: TensorLike, table: TensorLike) -> TensorLike:
    """h @ table.T for a (vocab, d) embedding table, written as a product
    over the last dim of both: the table is read as it is stored, never
    transposed into a second copy of itself (pdg-register-tile-contractions
    runs it in dot form)."""
    batch = "abcefghijklmnopqrstu"[: h.ndim - 1]
    return pf.einsum(f"{batch}d,vd->{batch}v", h, table)


class LayerNorm(Module):
    def __init__(self, program, path, d: int, eps: float = 1e-5, dtype="f32"):
        super().__init__(program, path)
        self.g = self.param("g", (d,), dtype)
        self.b = self.param("b", (d,), dtype)
        self.eps = eps

    def __call__(self, x: TensorLike) -> TensorLike:
        mu = x.mean(axis=-1, keepdims=True)
        centered = x - mu
        var = (centered * centered).mean(axis=-1, keepdims=True)
        return centered * pf.rsqrt(var + self.eps) * self.g + self.b


class RMSNorm(Module):
    def __init__(self, program, path, d: int, eps: float = 1e-6, dtype="f32"):
        super().__init__(program, path)
        self.g = self.param("g", (d,), dtype)
        self.eps = eps

    def __call__(self, x: TensorLike) -> TensorLike:
        ms = (x * x).mean(axis=-1, keepdims=True)
        return x * pf.rsqrt(ms + self.eps) * self.g


ACTIVATIONS = ("gelu_tanh", "gelu", "silu", "relu")


def check_activation(name: str) -> None:
    if name not in ACTIVATIONS:
        raise ProgramError(
            f"unknown activation '{name}'", hint=f"use one of {', '.join(ACTIVATIONS)}"
        )


def activation(name: str, x: TensorLike) -> TensorLike:
    """gelu_tanh (GPT-2's tanh approximation), gelu (exact, with erf),
    silu (x * sigmoid(x)) or relu."""
    if name == "gelu_tanh":
        return pf.gelu(x)
    if name == "gelu":
        return x * (pf.erf(x * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5
    if name == "silu":
        return pf.silu(x)
    check_activation(name)
    return pf.relu(x)
