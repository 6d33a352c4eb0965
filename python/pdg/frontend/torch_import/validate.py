"""pdg's body rules, checked on an imported function before it enters a
graph.

A node body is upstream MLIR on tensors for one point: the ops the
reference interpreter executes (python/pdg/interpreter/ops, the same set
the lowering bufferizes), in single-block regions, on ranked tensors and
scalars. An imported function must be one such body: one func.func with
one block and one result. An op outside the set (tm_tensor.scan from
torch.cumsum, tm_tensor.topk, a memref op) is refused by name, with the
module's source line torch-mlir kept as its location; this check runs on
the worker's op inventory, before pdg's MLIR parses the text (it could not
parse an op of a dialect it does not have).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..dtypes import TensorType
from .errors import TorchImportError
from .importer import Imported

# Structure and terminators: not ops of a body, but allowed where they are.
_STRUCTURE = {"builtin.module", "func.func", "func.return"}
_TERMINATORS = {"linalg.yield", "tensor.yield", "scf.yield"}
# Body ops of pdg's own that an imported function has no business holding.
_PDG_ONLY = {"pdg.point"}
# torch-mlir's runtime shape checks (a reshape's inferred size, equal sizes
# of a broadcast or a contraction): they hold for any sizes of the dynamic
# axes, each of which export.py requires to have its own name, so the
# import drops them (function.drop_shape_asserts).
SHAPE_ASSERTS = {"cf.assert"}

_HINTS = {
    "tm_tensor": "tm_tensor ops (from cumsum, topk, sort, scatter, index_put) have no upstream "
    "lowering; compute it with other torch ops (e.g. a cumulative sum as a matmul with a "
    "triangular mask)",
    "torch": "torch-mlir left a torch-dialect op it could not lower to linalg",
    "memref": "the body must work on tensors only (values, not buffers)",
    "cf": "a pdg body is one block: no branches or runtime asserts",
}

_ELEMENTS = {"f32": "f32", "f64": "f64", "i64": "i64", "i32": "i32", "i1": "bool"}
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+')


def body_ops() -> set[str]:
    from pdg.interpreter.ops import HANDLERS

    return (set(HANDLERS) - _PDG_ONLY) | _TERMINATORS


def source_line(location: str) -> str:
    """The module's own line in an MLIR location printed by torch-mlir: the
    innermost file outside torch and pdg (callsite locations list the
    callee first, then its callers)."""
    import torch

    skip = (
        os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep,
    )
    frames = [(m.group(1), m.group(2)) for m in _FILE_LOC.finditer(location)]
    outside = [
        f
        for f in frames
        # torch's own files, also those it names relative to its folder (torch/fx/...)
        if not os.path.abspath(f[0]).startswith(skip) and not f[0].startswith("torch" + os.sep)
    ]
    chosen = (outside or frames or [None])[0]
    return "an unknown line" if chosen is None else f"{chosen[0]}:{chosen[1]}"


def check_ops(imported: Imported, module: str) -> None:
    allowed = body_ops() | _STRUCTURE | SHAPE_ASSERTS
    for name, location in imported.ops:
        if name in allowed:
            continue
        dialect = name.split(".", 1)[0]
        raise TorchImportError(
            f"{module}: op '{name}' at {source_line(location)} cannot be part of a pdg body",
            hint=_HINTS.get(
                dialect,
                "pdg bodies hold arith, math, tensor, linalg, scf and affine.apply/min/max "
                "ops (python/pdg/interpreter/ops)",
            ),
        )


@dataclass(frozen=True)
class Signature:
    args: list[TensorType]
    results: list[TensorType]

    @property
    def result(self) -> TensorType:
        return self.results[0]


def tensor_type(t, what: str, module: str) -> TensorType:
    from mlir import ir

    if not isinstance(t, ir.RankedTensorType):
        raise TorchImportError(f"{module}: {what} is a {t}, not a ranked tensor")
    elem = str(t.element_type)
    if elem not in _ELEMENTS:
        raise TorchImportError(
            f"{module}: {what} has element type {elem}, which pdg values cannot hold",
            hint=f"use one of {', '.join(_ELEMENTS)}",
        )
    shape = tuple(None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank))
    return TensorType(shape, _ELEMENTS[elem])


def check_function(func, module: str, results: int = 1) -> Signature:
    """One block, `results` tensor results (a module's one; a vector-Jacobian
    product's one per gradient), values of types the interpreter and the
    lowering take; returns the argument and result types."""
    from mlir import ir
    from pdg.interpreter.errors import InterpreterError
    from pdg.interpreter.types import convert_type

    blocks = list(func.regions[0].blocks)
    if len(blocks) != 1:
        raise TorchImportError(f"{module}: the imported function has {len(blocks)} blocks, not 1")
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    if len(ftype.results) != results:
        raise TorchImportError(
            f"{module}: the imported function returns {len(ftype.results)} values, not {results}",
            hint="the module writes in place into a view of an input or a buffer "
            "(torch.export returns what it writes); return a new value instead",
        )
    args = [tensor_type(t, f"argument {i}", module) for i, t in enumerate(ftype.inputs)]
    outs = [tensor_type(t, f"result {i}", module) for i, t in enumerate(ftype.results)]

    def visit(op) -> None:
        for region in op.regions:
            if len(list(region.blocks)) > 1:
                raise TorchImportError(
                    f"{module}: op '{op.name}' at {source_line(str(op.location))} has a region "
                    "of several blocks; pdg bodies take single-block regions"
                )
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    for v in inner.results:
                        try:
                            convert_type(v.type)
                        except InterpreterError:
                            raise TorchImportError(
                                f"{module}: op '{inner.name}' at "
                                f"{source_line(str(inner.location))} makes a {v.type}, a type "
                                "pdg bodies do not hold"
                            ) from None
                    visit(inner)

    visit(func)
    return Signature(args, outs)
