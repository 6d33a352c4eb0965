"""The vector-Jacobian product of an imported module, from PyTorch's own
autograd: a second function to import beside the module's.

`torch.autograd.grad` of the functional module (its weights as arguments,
as in export.py) against an output cotangent, traced by `make_fx` into an
aten graph (gelu_backward, mm, native_layer_norm_backward, ...), exported
again by torch.export with the module's dynamic sizes and imported by the
worker like any module. (`torch.func.vjp` left as_strided/copy_ ops that
torch-mlir does not lower, and a torch.export of a module that calls it
fails: "meta conversion to view functorch tensor".)

The function takes the module's arguments (every weight, then every input)
and the cotangent of its output, and returns one gradient per float input,
then one per float weight (`VJP.wrt`). Integer inputs and buffers carry no
gradient and are held fixed.

Its cache key is the forward import's key with "vjp" and this file's code:
the forward key already covers the traced code, the types and torch's
version, so a cached vector-Jacobian product is neither traced nor imported
again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..dtypes import TensorType, is_float
from .errors import TorchImportError
from .export import Exported, _dims, _first_lines, _Functional, pdg_dtype


@dataclass(frozen=True)
class VJP:
    """The exported vector-Jacobian product and what each result is the
    gradient of: ("input", i) or ("weight", j), in result order."""

    exported: Exported
    wrt: tuple[tuple[str, int], ...]


def export_vjp(
    module,
    example_inputs: Sequence,
    dynamic_shapes: Sequence[Mapping[int, str] | None] | None,
    output: int | None,
    forward: Exported,
) -> VJP:
    """The vector-Jacobian product of the module `forward` imports (same
    example inputs, dynamic sizes and output)."""
    import torch

    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    wrt = tuple(
        ("input", i) for i, t in enumerate(forward.input_types) if is_float(t.dtype)
    ) + tuple(("weight", j) for j, p in enumerate(forward.params) if is_float(p.type.dtype))
    if not wrt:
        raise TorchImportError(
            f"{forward.module_name} has no float input or weight to differentiate",
        )
    result = _result_type(forward)
    cotangent = TensorType(result.shape, result.dtype)
    key = hashlib.sha256(
        (forward.key + "\0vjp\0" + Path(__file__).read_text()).encode()
    ).hexdigest()[:32]
    exported = Exported(
        program=None,
        module_name=forward.module_name,
        params=forward.params,
        input_types=[*forward.input_types, cotangent],
        key=key,
        trace=lambda: _trace(module, example_inputs, dynamic_shapes, output, forward, wrt),
    )
    return VJP(exported, wrt)


def _result_type(forward: Exported) -> TensorType:
    """The forward program's result type (None for a dynamic size)."""
    value = _output_node(forward.program).meta["val"]
    shape = tuple(s if isinstance(s, int) else None for s in value.shape)
    return TensorType(shape, pdg_dtype(value, f"{forward.module_name}'s output"))


def _output_node(program):
    out = next(n for n in program.graph.nodes if n.op == "output")
    (node,) = out.args[0]
    return node


def _trace(module, example_inputs, dynamic_shapes, output, forward: Exported, wrt):
    """torch.export of make_fx(vjp of the functional module)."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    name = forward.module_name
    state = module.state_dict()
    names = [p.name for p in forward.params]
    functional = _Functional(module, names, output)
    n = len(names)

    def vjp(*args):
        weights, inputs, cotangent = list(args[:n]), list(args[n:-1]), args[-1]

        def f(*primals):
            w, x = list(weights), list(inputs)
            for (kind, i), p in zip(wrt, primals, strict=True):
                (x if kind == "input" else w)[i] = p
            return functional(*w, *x)

        primals = [(inputs if kind == "input" else weights)[i] for kind, i in wrt]
        primals = [p.detach().requires_grad_() for p in primals]
        with torch.enable_grad():
            out = f(*primals)
            grads = torch.autograd.grad(out, primals, cotangent, allow_unused=True)
        return tuple(
            torch.zeros_like(p) if d is None else d for p, d in zip(primals, grads, strict=True)
        )

    weights = tuple(state[k].detach() for k in names)
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            out = functional(*weights, *example_inputs)
        args = (*weights, *example_inputs, torch.ones_like(out))
        try:
            graph = make_fx(vjp, tracing_mode="symbolic")(*args)
        except TorchImportError:
            raise
        except Exception as e:
            raise TorchImportError(
                f"PyTorch cannot differentiate {name}: {_first_lines(str(e))}",
                hint="an op without a derivative in PyTorch; import the module frozen "
                "(trainable=False) or rewrite that part with differentiable ops",
            ) from None
    finally:
        module.train(was_training)
    dims = _dims(dynamic_shapes, example_inputs)
    spec = None
    if dynamic_shapes is not None:
        spec = ((None,) * n + tuple(dims) + (_cotangent_dims(forward, dims),),)
    try:
        program = torch.export.export(_Graph(graph), args, dynamic_shapes=spec)
    except Exception as e:
        raise TorchImportError(
            f"torch.export could not trace the gradient of {name}: {_first_lines(str(e))}",
            hint="give each dynamic axis an example size that no static size of the module's "
            "inputs and weights has (the gradient is traced with every size symbolic)",
        ) from None
    return program


def _cotangent_dims(forward: Exported, dims: list[dict | None]) -> dict | None:
    """The output's dynamic axes as the inputs' torch.export Dims: an output
    axis whose size is an input axis's dynamic size takes its Dim."""
    program = forward.program
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    user = placeholders[len(placeholders) - len(forward.input_types) :]
    by_symbol = {}
    for i, node in enumerate(user):
        for axis, dim in (dims[i] or {}).items():
            by_symbol[str(node.meta["val"].shape[axis])] = dim
    out = {}
    for axis, size in enumerate(_output_node(program).meta["val"].shape):
        if isinstance(size, int):
            continue
        if str(size) not in by_symbol:
            raise TorchImportError(
                f"{forward.module_name}'s output axis {axis} has size {size}, not one of its "
                "inputs' dynamic sizes: its gradient cannot be imported",
                hint="return a tensor whose dynamic sizes are the inputs' own",
            )
        out[axis] = by_symbol[str(size)]
    return out or None


def _Graph(graph):  # noqa: N802
    """An nn.Module running the traced graph (torch.export takes modules)."""
    import torch

    class Graph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.graph = graph

        def forward(self, *args):
            return self.graph(*args)

    return Graph()
