"""Layers: Linear, Embedding, LayerNorm, RMSNorm, and the MLPs (plain and
gated, e.g. GPT-2's GELU MLP and Llama's SwiGLU)."""

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
        self.children: list[Module] = []

    def param(self, name: str, shape, dtype="f32") -> pf.RecurrentTensor:
        path = f"{self.path}.{name}" if self.path else name
        value = self.program.parameter(path.replace(".", "_"), shape, dtype)
        self.params[path] = value
        if self.program.parameters_frozen:
            self.frozen.add(path)
        return value

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

    def inputs_from(self, weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Program inputs from arrays keyed by parameter path; checks that
        every weight is present with the declared shape."""
        inputs = {}
        for path, value in self.parameters().items():
            if path not in weights:
                raise ProgramError(f"missing weight '{path}'", loc=value.loc)
            arr = np.asarray(weights[path])
            if tuple(arr.shape) != tuple(value.shape):
                raise ProgramError(
                    f"weight '{path}' has shape {tuple(arr.shape)}, expected {tuple(value.shape)}",
                    loc=value.loc,
                )
            name = self.program.initial_value(value).definition.name
            # No copy when the dtype is already right (a model's loaded weights).
            inputs[name] = np.asarray(arr, pf.dtypes.numpy_dtype(value.dtype))
        return inputs

    def init_weights(self, seed: int = 0, scale: float = 0.02) -> dict[str, np.ndarray]:
        """Random weights (normal * scale; norms' gains 1, biases 0), by path."""
        rng = np.random.default_rng(seed)
        out = {}
        for path, value in self.parameters().items():
            dtype = pf.dtypes.numpy_dtype(value.dtype)
            leaf = path.rsplit(".", 1)[-1]
            if leaf in ("g", "gain"):
                out[path] = np.ones(value.shape, dtype)
            elif leaf in ("b", "bias"):
                out[path] = np.zeros(value.shape, dtype)
            else:
                out[path] = (rng.standard_normal(value.shape) * scale).astype(dtype)
        return out


class Linear(Module):
    """y = x @ w + b, with w of shape (d_in, d_out); with a low-rank
    adapter (add_adapter), y = x @ w + scale * (x @ lora_a) @ lora_b + b."""

    def __init__(self, program, path, d_in: int, d_out: int, bias: bool = True, dtype="f32"):
        super().__init__(program, path)
        self.w = self.param("w", (d_in, d_out), dtype)
        self.b = self.param("b", (d_out,), dtype) if bias else None
        self.adapter: tuple[pf.RecurrentTensor, pf.RecurrentTensor, float] | None = None
        self.adapter_enabled = True

    def add_adapter(self, rank: int, scale: float) -> None:
        """LoRA: parameters lora_a (d_in, rank) and lora_b (rank, d_out)."""
        d_in, d_out = self.w.shape
        dtype = self.w.dtype
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
    """Rows of a (vocab, d) table, looked up by integer ids."""

    def __init__(self, program, path, vocab: int, d: int, dtype="f32"):
        super().__init__(program, path)
        self.table = self.param("w", (vocab, d), dtype)

    def __call__(self, ids: TensorLike) -> TensorLike:
        return pf.take(self.table, ids, axis=0)


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


class MLP(Module):
    """Linear -> activation -> Linear; GPT-2's with the defaults (tanh GELU)."""

    def __init__(
        self, program, path, d: int, hidden: int, dtype="f32", act="gelu_tanh", bias: bool = True
    ):
        super().__init__(program, path)
        check_activation(act)
        self.act = act
        self.fc = self.child(Linear(program, f"{path}.fc", d, hidden, bias, dtype))
        self.proj = self.child(Linear(program, f"{path}.proj", hidden, d, bias, dtype))

    def __call__(self, x: TensorLike) -> TensorLike:
        return self.proj(activation(self.act, self.fc(x)))


class GatedMLP(Module):
    """down(act(gate(x)) * up(x)): Llama's SwiGLU with act="silu"."""

    def __init__(
        self, program, path, d: int, hidden: int, dtype="f32", act="silu", bias: bool = False
    ):
        super().__init__(program, path)
        check_activation(act)
        self.act = act
        self.gate = self.child(Linear(program, f"{path}.gate", d, hidden, bias, dtype))
        self.up = self.child(Linear(program, f"{path}.up", d, hidden, bias, dtype))
        self.down = self.child(Linear(program, f"{path}.down", hidden, d, bias, dtype))

    def __call__(self, x: TensorLike) -> TensorLike:
        return self.down(activation(self.act, self.gate(x)) * self.up(x))
