"""PyTorch modules as pdg operators: `from_torch(module, example_inputs)`.

The module is exported by torch.export with its weights as arguments,
lowered to linalg on tensors by torch-mlir in a worker process, checked
against pdg's body rules and kept as a node body
(pdg.frontend.torch_import). Applied to tensors of a program, it declares
the module's weights as program inputs named after their state_dict path
(`rm.head.weight` -> input `rm_head_weight`), frozen by default (imported
modules score and compare) or, with `trainable=True`, parameters that
pdg.autodiff differentiates through the module (torch_gradient.py), and
computes one value per point of its operands' domains like any other
operator:

    scorer = from_torch(reward_model, (torch.zeros(5, 16),), dynamic_shapes=[{0: "seq"}])
    rm = scorer.bind(prog, "rm")                  # the weights, as inputs
    score = rm(hidden[0 : t + 1])                 # a (?, 16) read per point
    inputs = {**rm.inputs_from(reward_model.state_dict()), ...}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path

import numpy as np

import pdg.frontend as pf
from pdg.frontend import Program, ProgramError, TensorLike
from pdg.frontend.ops import _make
from pdg.frontend.torch_import.function import (
    TORCH_MODULE,
    ImportedFunction,
    load_function,
    load_functions,
)

from .layers import Module
from .torch_gradient import TorchGradient, TorchModuleRule

_NO_DERIVATIVE = (
    "an imported PyTorch module is frozen: pdg.autodiff does not differentiate through its body"
)
_TRAINABLE_HINT = "import it with from_torch(..., trainable=True) to differentiate through it"


def from_torch(
    module,
    example_inputs,
    dynamic_shapes: Sequence[Mapping[int, str] | None] | None = None,
    output: int | None = None,
    cache_dir: str | Path | None | bool = True,
    trainable: bool = False,
) -> TorchFunction:
    """Imports `module` (a torch.nn.Module) as a pdg operator.

    `example_inputs`: a tensor or a tuple of them, the module's inputs for
    one point. `dynamic_shapes`: per input, None or {axis: name} for the
    axes whose size varies (a slice over a dim: `x[0 : t + 1]`); one name
    is one size. `output`: which tensor of a returned tuple to import.
    `cache_dir`: where imports are kept across processes (True: the
    default, $PDG_TORCH_IMPORT_CACHE or ~/.cache/pdg/torch-import; None or
    False: memory only). `trainable`: the weights are parameters an
    optimizer updates and pdg.autodiff.grad differentiates through the
    module (its vector-Jacobian product, from PyTorch's autograd, is
    imported too); by default the module is frozen."""
    from pdg.frontend.torch_import.export import export_module
    from pdg.frontend.torch_import.importer import default_cache_dir, import_exported
    from pdg.frontend.torch_import.vjp import export_vjp

    exported = export_module(module, example_inputs, dynamic_shapes, output)
    if cache_dir is True:
        cache = default_cache_dir()
    elif cache_dir is None or cache_dir is False:
        cache = None
    else:
        cache = Path(cache_dir)
    imported = import_exported(exported, cache)
    function = load_function(exported, imported)
    gradient = None
    if trainable:
        vjp = export_vjp(module, example_inputs, dynamic_shapes, output, exported)
        functions = load_functions(vjp.exported, import_exported(vjp.exported, cache), len(vjp.wrt))
        gradient = TorchGradient(tuple(functions), vjp.wrt)
    return TorchFunction(function, gradient)


class TorchFunction:
    """An imported module, not yet in a program: bind it to one."""

    def __init__(self, function: ImportedFunction, gradient: TorchGradient | None = None):
        self.function = function
        self.gradient = gradient  # None: frozen

    @property
    def result_type(self) -> pf.TensorType:
        return self.function.result

    def bind(self, program: Program, path: str) -> TorchModule:
        """The module in `program`, its weights the inputs `<path>_<name>`."""
        return TorchModule(program, path, self.function, self.gradient)


class TorchModule(Module):
    """An imported module's weights in a program; calling it on tensors
    makes the node that runs the imported body."""

    def __init__(
        self,
        program: Program,
        path: str,
        function: ImportedFunction,
        gradient: TorchGradient | None = None,
    ):
        super().__init__(program, path)
        self.function = function
        self.gradient = gradient
        self.weights: list[pf.RecurrentTensor] = []
        with program.frozen_parameters() if gradient is None else nullcontext():
            for p in function.params:
                self.weights.append(self.param(p.name, p.type.shape, p.type.dtype))

    def __call__(self, *xs: TensorLike) -> pf.RecurrentTensor:
        fn = self.function
        name = fn.module_name
        if len(xs) != len(fn.input_types):
            raise ProgramError(
                f"{name} takes {len(fn.input_types)} inputs, got {len(xs)}",
            )
        for i, (x, want) in enumerate(zip(xs, fn.input_types, strict=True)):
            if not isinstance(x, TensorLike):
                raise ProgramError(
                    f"{name}: input {i} must be a pdg tensor, got {type(x).__name__}"
                )
            _check_input(name, i, x.type, want)
        node_name = _node_name(self.path)
        if self.gradient is None:
            rule = {"no_derivative": f"'{name}' ({self.path}): {_NO_DERIVATIVE}; {_TRAINABLE_HINT}"}
        else:
            rule = {"vjp": TorchModuleRule(self.gradient, len(self.weights), node_name)}
        return _make(
            TORCH_MODULE, [*self.weights, *xs], fn.result, function=fn, name=node_name, **rule
        )

    def inputs_from(self, weights: Mapping) -> dict[str, np.ndarray]:
        """Program inputs from the module's state_dict (torch tensors or
        NumPy arrays, keyed by the state_dict's names)."""
        arrays = {}
        for p in self.function.params:
            if p.name not in weights:
                raise ProgramError(f"missing weight '{p.name}' of {self.function.module_name}")
            value = weights[p.name]
            if hasattr(value, "detach"):  # a torch tensor
                value = value.detach().cpu().numpy()
            arrays[f"{self.path}.{p.name}" if self.path else p.name] = value
        return super().inputs_from(arrays)


def _node_name(path: str) -> str:
    return (path.replace(".", "_") or "torch") + "_out"


def _check_input(module: str, i: int, have: pf.TensorType, want: pf.TensorType) -> None:
    """The read must have the imported type; a static size fits a dynamic axis."""
    fits = (
        have.dtype == want.dtype
        and len(have.shape) == len(want.shape)
        and all(w is None or h == w for h, w in zip(have.shape, want.shape, strict=True))
    )
    if fits:
        return
    hint = ""
    if len(have.shape) != len(want.shape):
        hint = (
            f"import the module with an example input of rank {len(have.shape)} (a slice "
            "x[a : b] adds an axis of varying size: name it in dynamic_shapes)"
        )
    elif have.dtype == want.dtype:
        varying = [a for a, (h, w) in enumerate(zip(have.shape, want.shape, strict=True)) if h != w]
        if varying and all(have.shape[a] is None for a in varying):
            hint = f"declare axes {varying} dynamic in from_torch(..., dynamic_shapes=...)"
    raise ProgramError(
        f"{module}: input {i} is {have.mlir()} per point; the module was imported for "
        f"{want.mlir()}",
        hint=hint,
    )
