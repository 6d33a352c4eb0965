"""The MLPs: plain (GPT-2's GELU MLP) and gated (Llama's SwiGLU), whole or
split over ranks (tensor_parallel.py: the first products by columns, the
last by rows)."""

from __future__ import annotations

from pdg.frontend import TensorLike

from .layers import Module, activation, check_activation
from .tensor_parallel import Shards, linear


class MLP(Module):
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
        super().__init__(program, path)
        check_activation(act)
        self.act = act

        def part(name, d_in, d_out, split):
            where = f"{path}.{name}"
            return self.child(
                linear(program, where, d_in, d_out, bias, dtype, weight_dtype, shards, split)
            )

        self.fc = part("fc", d, hidden, "columns")
        self.proj = part("proj", hidden, d, "rows")

    def __call__(self, x: TensorLike) -> TensorLike:
        return self.proj(activation(self.act, self.fc(x)))


class GatedMLP(Module):
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
        super().__init__(program, path)
        check_activation(act)
        self.act = act

        def part(name, d_in, d_out, split):
            where = f"{path}.{name}"
            return self.child(
                linear(program, where, d_in, d_out, bias, dtype, weight_dtype, shards, split)
            )

        self.gate = part("gate", d, hidden, "columns")
        self.up = part("up", d, hidden, "columns")
        self.down = part("down", hidden, d, "rows")

    def __call__(self, x: TensorLike) -> TensorLike:
        return self.down(activation(self.act, self.gate(x)) * self.up(x))
