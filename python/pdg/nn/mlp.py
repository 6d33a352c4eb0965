"""The MLPs: plain (GPT-2's GELU MLP) and gated (Llama's SwiGLU), whole or
split over ranks (tensor_parallel.py: the first products by columns, the
last by rows)."""

from __future__ import annotations

from pdg.frontend import TensorLike

from .layers import Module, activation, check_activation
from .tensor_parallel import Shards, linear


class _Projections(Module):
    """What both MLPs share: an activation, and projections that are
    Linears or, with shards, split by columns or rows."""

    def __init__(self, program, path, act, bias, dtype, weight_dtype, shards):
        super().__init__(program, path)
        check_activation(act)
        self.act = act
        self._settings = (bias, dtype, weight_dtype, shards)

    def projection(self, name: str, d_in: int, d_out: int, split: str) -> Module:
        bias, dtype, weight_dtype, shards = self._settings
        where = f"{self.path}.{name}"
        part = linear(self.program, where, d_in, d_out, bias, dtype, weight_dtype, shards, split)
        return self.child(part)


class MLP(_Projections):
    """Linear -> activation -> Linear; GPT-2's with the defaults (tanh GELU)."""

    def __init__(
        self,
        program,
        path,
        d: int,
        hidden: int,
        dtype="f32",
        act="gelu_tanh",
        bias: bool = True,
        weight_dtype: str | None = None,  # bf16: the matrices in bf16 (see Linear)
        shards: Shards | None = None,
    ):
        super().__init__(program, path, act, bias, dtype, weight_dtype, shards)
        self.fc = self.projection("fc", d, hidden, "columns")
        self.proj = self.projection("proj", hidden, d, "rows")

    def __call__(self, x: TensorLike) -> TensorLike:
        return self.proj(activation(self.act, self.fc(x)))


class GatedMLP(_Projections):
    """down(act(gate(x)) * up(x)): Llama's SwiGLU with act="silu"."""

    def __init__(
        self,
        program,
        path,
        d: int,
        hidden: int,
        dtype="f32",
        act="silu",
        bias: bool = False,
        weight_dtype: str | None = None,
        shards: Shards | None = None,
    ):
        super().__init__(program, path, act, bias, dtype, weight_dtype, shards)
        self.gate = self.projection("gate", d, hidden, "columns")
        self.up = self.projection("up", d, hidden, "columns")
        self.down = self.projection("down", hidden, d, "rows")

    def __call__(self, x: TensorLike) -> TensorLike:
        return self.down(activation(self.act, self.gate(x)) * self.up(x))
