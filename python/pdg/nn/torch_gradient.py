"""The vector-Jacobian rule of an imported PyTorch module's node (see
pdg.frontend.torch_import.vjp): a module imported with
`from_torch(..., trainable=True)` carries it in its node's `vjp` attribute,
and pdg.autodiff applies it like any operator's rule.

The gradient of each wanted operand is one more node running the imported
vector-Jacobian product per point, on the node's own reads (weights,
inputs) and the incoming gradient. A weight's gradient per point is summed
over the dims the node runs over by autodiff, as for any weight a node
reads at every point.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdg.frontend import TensorLike
from pdg.frontend.ops import _make
from pdg.frontend.torch_import.function import TORCH_MODULE, ImportedFunction


@dataclass(frozen=True)
class TorchGradient:
    """One imported function per gradient: `wrt[k]` is ("input", i) or
    ("weight", j), the operand `functions[k]` is the gradient of."""

    functions: tuple[ImportedFunction, ...]
    wrt: tuple[tuple[str, int], ...]


class TorchModuleRule:
    """The rule of one imported module's node, whose operands are the
    module's weights, then its inputs."""

    def __init__(self, gradient: TorchGradient, weights: int, node_name: str):
        self.node_name = node_name
        # operand position -> the function that gives its gradient
        self.by_position = {
            (i if kind == "weight" else weights + i): fn
            for (kind, i), fn in zip(gradient.wrt, gradient.functions, strict=True)
        }

    @property
    def positions(self) -> set[int]:
        return set(self.by_position)

    def apply(self, node, args: list[TensorLike], g: TensorLike, wanted: set[int]) -> dict:
        out = {}
        for pos in sorted(wanted):
            fn = self.by_position[pos]
            out[pos] = _make(
                TORCH_MODULE,
                [*args, g],
                args[pos].type,
                function=fn,
                name=f"d_{self.node_name}_{pos}",
                no_derivative=f"the gradient of '{fn.module_name}' is not differentiated again",
            )
        return out
