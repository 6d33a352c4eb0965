"""The PyTorch side of an import, in pdg's own process: torch.export of the
module with its weights as arguments.

The module is exported through a wrapper whose forward takes every entry
of the module's state_dict (parameters and persistent buffers) as an
argument before the module's own inputs (`torch.func.functional_call`), so
the imported function computes with whatever weights the program is given:
none is baked in as a constant, and one import (one compiled artifact)
serves every set of weights of the same shapes.

What torch.export accepts but a pdg body cannot hold is refused here, with
the op and the module's source line: a module that writes into its inputs
or buffers, and shapes that depend on tensor values (`nonzero`, boolean
masks).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..dtypes import TensorType
from .errors import TorchImportError

# torch dtypes pdg values can hold, by their name in torch.
_DTYPES = {
    "torch.float32": "f32",
    "torch.float64": "f64",
    "torch.int64": "i64",
    "torch.int32": "i32",
    "torch.bool": "bool",
}


@dataclass(frozen=True)
class Param:
    """A weight the imported function takes: its state_dict name and type."""

    name: str
    type: TensorType


@dataclass
class Exported:
    program: Any  # torch.export.ExportedProgram; None until `trace` makes it
    module_name: str
    params: list[Param]
    input_types: list[TensorType]  # the module's own inputs; None for a dynamic size
    key: str  # what decides the imported IR (see `_key`)
    # Makes the program where tracing is only worth it on a cache miss (vjp.py).
    trace: Callable[[], Any] | None = None

    def exported_program(self):
        return self.program if self.program is not None else self.trace()


def pdg_dtype(t, what: str) -> str:
    name = str(t.dtype)
    if name not in _DTYPES:
        raise TorchImportError(
            f"{what} has dtype {name}, which pdg values cannot hold",
            hint=f"use one of {', '.join(_DTYPES)} (e.g. module.float())",
        )
    return _DTYPES[name]


def export_module(
    module,
    example_inputs: Sequence,
    dynamic_shapes: Sequence[Mapping[int, str] | None] | None,
    output: int | None,
) -> Exported:
    import torch

    if not isinstance(module, torch.nn.Module):
        raise TorchImportError(
            f"from_torch() imports a torch.nn.Module, got {type(module).__name__}"
        )
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor):
            raise TorchImportError(
                f"example input {i} is a {type(x).__name__}, not a tensor",
                hint="pass the module's tensor inputs; other arguments belong in the module",
            )
    state = module.state_dict()
    names = list(state)
    params = [
        Param(n, TensorType(tuple(state[n].shape), pdg_dtype(state[n], f"weight '{n}'")))
        for n in names
    ]
    dims = _dims(dynamic_shapes, example_inputs)
    input_types = [
        TensorType(
            tuple(None if a in (dims[i] or {}) else int(s) for a, s in enumerate(x.shape)),
            pdg_dtype(x, f"example input {i}"),
        )
        for i, x in enumerate(example_inputs)
    ]
    wrapper = _Functional(module, names, output)
    args = tuple(state[n].detach() for n in names) + example_inputs
    spec = None if dynamic_shapes is None else ((None,) * len(names) + tuple(dims),)
    was_training = module.training
    module.eval()  # imported modules score and compare: dropout off
    try:
        program = torch.export.export(wrapper, args, dynamic_shapes=spec)
    except TorchImportError:
        raise
    except Exception as e:
        raise TorchImportError(
            f"torch.export could not trace {type(module).__name__}: {_first_lines(str(e))}",
            hint="the module must be traceable by torch.export (no Python control flow on "
            "tensor values); see the message above",
        ) from None
    finally:
        module.train(was_training)
    _check_no_mutation(program, type(module).__name__, names)
    _check_static_data_shapes(program, type(module).__name__)
    return Exported(
        program=program,
        module_name=type(module).__name__,
        params=params,
        input_types=input_types,
        key=_key(program, params, input_types, output),
    )


def _Functional(module, names: list[str], output: int | None):  # noqa: N802
    """A module whose forward(*weights, *inputs) is module(*inputs) with
    those weights (the class is made here: torch is imported only on use)."""
    import torch

    class Functional(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.module = module

        def forward(self, *args):
            n = len(names)
            weights = dict(zip(names, args[:n], strict=True))
            out = torch.func.functional_call(self.module, weights, tuple(args[n:]))
            return _select(out, output, type(self.module).__name__)

    return Functional()


def _select(out, output: int | None, module: str):
    """The one tensor the import computes: the output, or output[i] of a
    tuple (a Hugging Face block returns `(hidden_states, ...)`)."""
    import torch

    if isinstance(out, torch.Tensor):
        if output not in (None, 0):
            raise TorchImportError(f"{module} returns one tensor; output={output} does not exist")
        return out
    tensors = [x for x in out] if isinstance(out, (tuple, list)) else None
    if tensors is None:
        raise TorchImportError(
            f"{module} returns a {type(out).__name__}; from_torch() takes a tensor or a tuple "
            "of tensors"
        )
    if output is None:
        if len([t for t in tensors if isinstance(t, torch.Tensor)]) != 1:
            raise TorchImportError(
                f"{module} returns {len(tensors)} values",
                hint="choose the one to import with output=i",
            )
        return next(t for t in tensors if isinstance(t, torch.Tensor))
    if not 0 <= output < len(tensors) or not isinstance(tensors[output], torch.Tensor):
        raise TorchImportError(f"{module}'s output {output} is not a tensor it returns")
    return tensors[output]


def _dims(dynamic_shapes, example_inputs) -> list[dict | None]:
    """torch.export Dims from {axis: name} per input (one Dim per name)."""
    from torch.export import Dim

    if dynamic_shapes is None:
        return [None] * len(example_inputs)
    if isinstance(dynamic_shapes, Mapping) or len(dynamic_shapes) != len(example_inputs):
        raise TorchImportError(
            "dynamic_shapes needs one entry per example input: None or {axis: 'name'}",
            hint="e.g. dynamic_shapes=[{0: 'seq'}] for one input whose first axis varies",
        )
    by_name: dict[str, Any] = {}
    out: list[dict | None] = []
    for i, (entry, x) in enumerate(zip(dynamic_shapes, example_inputs, strict=True)):
        if entry is None:
            out.append(None)
            continue
        dims = {}
        for axis, name in dict(entry).items():
            if not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
                raise TorchImportError(
                    f"dynamic_shapes[{i}]: axis {axis!r} is not an axis of a rank-{x.ndim} input"
                )
            if not isinstance(name, str) or not name.isidentifier():
                raise TorchImportError(
                    f"dynamic_shapes[{i}][{axis}]: name the size with an identifier, got {name!r}"
                )
            if x.shape[axis] < 2:
                raise TorchImportError(
                    f"example input {i} has size {x.shape[axis]} on dynamic axis {axis}",
                    hint="give an example of size 2 or more there: torch.export fixes sizes 0 "
                    "and 1",
                )
            if name in by_name:
                raise TorchImportError(
                    f"dynamic_shapes: the size '{name}' names two axes",
                    hint="give each dynamic axis its own name: pdg cannot check before a run "
                    "that two reads have one size",
                )
            dims[axis % x.ndim] = by_name[name] = Dim(name, min=1)
        out.append(dims)
    return out


def _first_lines(text: str, n: int = 3) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:n])


def node_location(node) -> str:
    """The module's own source line of an FX node: the innermost frame of
    its stack trace outside torch (where a torch layer was called)."""
    import torch

    trace = node.meta.get("stack_trace") or ""
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    frames = []
    for line in trace.splitlines():
        line = line.strip()
        if line.startswith('File "'):
            path, _, rest = line[6:].partition('", line ')
            frames.append((path, rest.split(",")[0]))
    outside = [f for f in frames if not os.path.abspath(f[0]).startswith(torch_dir)]
    chosen = (outside or frames or [("<unknown>", "0")])[-1]
    return f"{chosen[0]}:{chosen[1]}"


def _target_name(node) -> str:
    target = node.target
    return getattr(target, "__name__", None) or str(target)


def _check_no_mutation(program, module: str, weights: list[str]) -> None:
    """An op that writes into a weight, a buffer or an input (the exported
    graph is not functionalized yet: the write is the op's own)."""
    import torch

    names = _placeholder_names(program, weights)
    for node in program.graph.nodes:
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        for arg, value in zip(target._schema.arguments, node.args, strict=False):
            written = arg.alias_info is not None and arg.alias_info.is_write
            if written and getattr(value, "op", None) == "placeholder":
                raise TorchImportError(
                    f"{module} writes in place into '{names.get(value.name, value.name)}' "
                    f"({_target_name(node)} at {node_location(node)})",
                    hint="a pdg body computes a new value from its inputs; return the result "
                    "instead of updating a buffer, a weight or an input",
                )


def _placeholder_names(program, weights: list[str]) -> dict[str, str]:
    """Graph input -> the name a user knows: the state_dict's for weights
    (the wrapper's first arguments), `input <i>` for the module's inputs."""
    sig = program.graph_signature
    user = [s.arg.name for s in sig.input_specs if str(s.kind).endswith("USER_INPUT")]
    return {
        name: weights[i] if i < len(weights) else f"input {i - len(weights)}"
        for i, name in enumerate(user)
    }


def _check_static_data_shapes(program, module: str) -> None:
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    for node in program.graph.nodes:
        value = node.meta.get("val")
        if value is not None and free_unbacked_symbols(value):
            raise TorchImportError(
                f"{module}: the shape of {_target_name(node)}'s result depends on tensor values "
                f"(at {node_location(node)})",
                hint="pdg bodies have shapes given by their inputs' shapes; compute a mask "
                "(torch.where) instead of selecting elements",
            )


def _key(program, params: list[Param], input_types: list[TensorType], output) -> str:
    """What decides the imported IR: the exported graph (the module's code
    as traced), its lifted constants, the weights' and inputs' types,
    torch's and torch-mlir's versions and the worker's own code. Not the
    weights' values: they are inputs of the imported function."""
    from importlib import metadata

    import torch

    h = hashlib.sha256()

    def add(text: str) -> None:
        h.update(text.encode())
        h.update(b"\0")

    add(program.graph_module.code)
    add(str(program.graph))
    add(str(program.range_constraints))
    for name, value in sorted(program.constants.items()):
        add(name)
        if isinstance(value, torch.Tensor):
            add(f"{value.dtype}{tuple(value.shape)}")
            h.update(value.detach().contiguous().cpu().numpy().tobytes())
    for p in params:
        add(f"{p.name}:{p.type.mlir()}")
    for t in input_types:
        add(t.mlir())
    add(f"output={output}")
    add(torch.__version__)
    add(metadata.version("torch-mlir"))
    with open(os.path.join(os.path.dirname(__file__), "worker.py"), "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:32]
