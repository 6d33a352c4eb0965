"""Writing a node's body: upstream MLIR (arith, math, tensor, linalg) on
tensors for one point, as text. One builder per body; `generic` writes a
linalg.generic whose region is filled by a callback on scalar values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .dtypes import TensorType, is_float, mlir_element


@dataclass(frozen=True)
class Val:
    """An SSA value in the body and its type (TensorType, or a scalar
    element type name such as 'f32' / 'index' inside regions)."""

    name: str
    type: object

    @property
    def tensor(self) -> TensorType:
        assert isinstance(self.type, TensorType)
        return self.type


def scalar_type(dtype: str) -> str:
    return mlir_element(dtype)


def float_literal(value: float, dtype: str) -> str:
    if value != value:
        return "0x7FC00000" if dtype == "f32" else "0x7FF8000000000000"
    if value in (float("inf"), float("-inf")):
        if dtype == "f32":
            return "0x7F800000" if value > 0 else "0xFF800000"
        return "0x7FF0000000000000" if value > 0 else "0xFFF0000000000000"
    text = repr(float(value))
    # MLIR float literals need a '.' in the mantissa: 1e-05 -> 1.0e-05.
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


class Body:
    """Accumulates the lines of one region (and nested regions)."""

    def __init__(self, counter: list[int] | None = None, indent: str = "  "):
        self.lines: list[str] = []
        self._counter = counter if counter is not None else [0]
        self.indent = indent

    def fresh(self) -> str:
        self._counter[0] += 1
        return f"%v{self._counter[0]}"

    def emit(self, text: str, type_: object) -> Val:
        name = self.fresh()
        self.lines.append(f"{self.indent}{name} = {text}")
        return Val(name, type_)

    def emit_multi(self, count: int, text: str, types: Sequence[object]) -> list[Val]:
        name = self.fresh()
        self.lines.append(f"{self.indent}{name}:{count} = {text}")
        return [Val(f"{name}#{i}", t) for i, t in enumerate(types)]

    def line(self, text: str) -> None:
        self.lines.append(f"{self.indent}{text}")

    def nested(self) -> Body:
        return Body(self._counter, self.indent + "  ")

    # -- scalars --------------------------------------------------------------
    def const_scalar(self, value, dtype: str) -> Val:
        elem = scalar_type(dtype)
        if dtype == "bool":
            return self.emit(f"arith.constant {'true' if value else 'false'}", elem)
        if is_float(dtype):
            return self.emit(f"arith.constant {float_literal(value, dtype)} : {elem}", elem)
        return self.emit(f"arith.constant {int(value)} : {elem}", elem)

    def const_index(self, value: int) -> Val:
        return self.emit(f"arith.constant {value} : index", "index")

    def const_tensor(self, value, type_: TensorType) -> Val:
        """A splat constant tensor (static shape)."""
        if type_.dtype == "bool":
            lit = "true" if value else "false"
        elif is_float(type_.dtype):
            lit = float_literal(value, type_.dtype)
        else:
            lit = str(int(value))
        return self.emit(f"arith.constant dense<{lit}> : {type_.mlir()}", type_)

    # -- tensors --------------------------------------------------------------
    def dim_size(self, v: Val, axis: int) -> Val:
        c = self.const_index(axis)
        return self.emit(f"tensor.dim {v.name}, {c.name} : {v.tensor.mlir()}", "index")

    def empty(self, type_: TensorType, sizes: Sequence[Val]) -> Val:
        """`tensor.empty` with one index value per dynamic dim."""
        args = ", ".join(s.name for s in sizes)
        return self.emit(f"tensor.empty({args}) : {type_.mlir()}", type_)

    def filled(self, type_: TensorType, sizes: Sequence[Val], value) -> Val:
        init = self.empty(type_, sizes)
        v = self.const_scalar(value, type_.dtype)
        return self.emit(
            f"linalg.fill ins({v.name} : {v.type}) outs({init.name} : {type_.mlir()})"
            f" -> {type_.mlir()}",
            type_,
        )

    def generic(
        self,
        inputs: Sequence[tuple[Val, str]],
        outputs: Sequence[tuple[Val, str]],
        iterators: Sequence[str],
        region: Callable[[Body, list[Val], list[Val]], Sequence[Val]],
    ) -> list[Val]:
        """A linalg.generic. `inputs`/`outputs` pair a value with its
        indexing map's results (e.g. "d0, d1"); `region` gets scalar block
        arguments for inputs and outputs and returns the yielded scalars."""
        rank = len(iterators)
        dims = ", ".join(f"d{i}" for i in range(rank))
        maps = ", ".join(
            f"affine_map<({dims}) -> ({results})>" for _, results in [*inputs, *outputs]
        )
        iters = ", ".join(f'"{it}"' for it in iterators)
        region_body = self.nested()
        in_args = [Val(region_body.fresh(), scalar_type(v.tensor.dtype)) for v, _ in inputs]
        out_args = [Val(region_body.fresh(), scalar_type(v.tensor.dtype)) for v, _ in outputs]
        yielded = region(region_body, in_args, out_args)
        block_args = ", ".join(f"{a.name}: {a.type}" for a in [*in_args, *out_args])
        ins = ""
        if inputs:
            ins = (
                f" ins({', '.join(v.name for v, _ in inputs)} : "
                f"{', '.join(v.tensor.mlir() for v, _ in inputs)})"
            )
        outs = (
            f" outs({', '.join(v.name for v, _ in outputs)} : "
            f"{', '.join(v.tensor.mlir() for v, _ in outputs)})"
        )
        result_types = [v.tensor for v, _ in outputs]
        head = (
            f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}}{ins}{outs} {{"
        )
        inner = [f"{region_body.indent}^bb0({block_args}):", *region_body.lines]
        inner.append(
            f"{region_body.indent}  linalg.yield {', '.join(y.name for y in yielded)} : "
            f"{', '.join(str(y.type) for y in yielded)}"
        )
        results = ", ".join(t.mlir() for t in result_types)
        tail = f"}} -> {results if len(outputs) == 1 else f'({results})'}"
        text = "\n".join([head, *inner, f"{self.indent}{tail}"])
        if len(outputs) == 1:
            return [self.emit(text, result_types[0])]
        return self.emit_multi(len(outputs), text, result_types)
