"""An imported function as a node body: the frontend operator
`torch_module`, whose body is the imported func.func's body.

pdg's MLIR parses the worker's text (after validate.check_ops has made sure
it can), the body rules are checked, and the function's body is printed
again by pdg's MLIR without locations and with aliases inlined
(`use_local_scope`), so the text is exactly what MLIR 22 reads. Writing it
into a node renames its values: the function's arguments become the node's
block arguments (`%a<i>`, with a tensor.cast where the node reads a static
size the function takes as dynamic), every other value gets the prefix
`t_` (pdg's own body values are `%v<n>`), and `return` becomes the node's
result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..body import Body, Val
from ..dtypes import TensorType
from ..ops import OpSpec
from .errors import TorchImportError
from .export import Exported, Param
from .importer import Imported
from .validate import SHAPE_ASSERTS, check_function, check_ops

_VALUE = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")


@dataclass(frozen=True)
class ImportedFunction:
    """A validated imported module: body lines (values renamed, arguments
    `%arg<i>`), its weights and inputs, and its result type."""

    module_name: str
    params: tuple[Param, ...]
    arg_types: tuple[TensorType, ...]  # the weights', then the inputs'
    result: TensorType
    lines: tuple[str, ...]  # the body without its return
    returned: str  # the (renamed) value it returns
    key: str

    @property
    def input_types(self) -> tuple[TensorType, ...]:
        return self.arg_types[len(self.params) :]


def load_function(exported: Exported, imported: Imported) -> ImportedFunction:
    """The imported module's function: one result."""
    (function,) = load_functions(exported, imported, 1)
    return function


def load_functions(exported: Exported, imported: Imported, results: int) -> list[ImportedFunction]:
    """One ImportedFunction per result of the imported function (a
    vector-Jacobian product returns one gradient per operand), each body
    holding only the ops its own result needs."""
    module = exported.module_name
    check_ops(imported, module)
    parsed, func = _parse(imported, module)
    sig = check_function(func, module, results)
    expected = [p.type for p in exported.params] + exported.input_types
    if len(sig.args) != len(expected):
        raise TorchImportError(
            f"{module}: the imported function takes {len(sig.args)} arguments; the module has "
            f"{len(exported.params)} weights and {len(exported.input_types)} inputs"
        )
    out = []
    for i, result in enumerate(sig.results):
        if results > 1:  # a fresh parse per result: keeping one erases the others' ops
            parsed, func = _parse(imported, module)
            _keep_only_result(func, i)
        lines, returned = _body_lines(func.get_asm(use_local_scope=True))
        out.append(
            ImportedFunction(
                module_name=module,
                params=tuple(exported.params),
                arg_types=tuple(sig.args),
                result=result,
                lines=tuple(lines),
                returned=returned,
                key=exported.key,
            )
        )
    return out


def _parse(imported: Imported, module: str):
    """The worker's module parsed by pdg's MLIR (keep it while using the
    function) and its func.func, shape asserts dropped."""
    from pdg.ir import make_context, parse_text
    from pdg.ir.source import ParseFailure

    try:
        parsed = parse_text(imported.text, f"<{module} from torch-mlir>", make_context())
    except ParseFailure as e:
        raise TorchImportError(
            f"{module}: pdg's MLIR cannot read what torch-mlir wrote:\n  {e}",
            hint="torch-mlir's newer MLIR printed syntax MLIR 22 does not parse; report it with "
            "the module",
        ) from None
    funcs = [op.operation for op in parsed.body.operations if op.operation.name == "func.func"]
    if len(funcs) != 1:
        raise TorchImportError(f"{module}: torch-mlir made {len(funcs)} functions, not 1")
    func = funcs[0]
    drop_shape_asserts(func)
    return parsed, func


def _keep_only_result(func, i: int) -> None:
    """Makes `func` return its i-th result alone and erases the ops that
    no longer reach a result (body ops are pure: nothing else needs them)."""
    from mlir import ir

    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1].operation
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    with ret.context, ret.location, ir.InsertionPoint(ret):
        ir.Operation.create("func.return", operands=[ret.operands[i]])
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs), [ftype.results[i]])
        )
    ret.erase()
    # Uses come after definitions: one backward sweep finds every dead op.
    for op in reversed(list(block.operations)[:-1]):
        op = op.operation
        if len(op.results) and all(not list(r.uses) for r in op.results):
            op.erase()


def drop_shape_asserts(func) -> None:
    """Erases torch-mlir's runtime shape checks (see validate.SHAPE_ASSERTS);
    the comparisons they read are left to canonicalization."""
    found = []

    def visit(op) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.operation.name in SHAPE_ASSERTS:
                        found.append(inner.operation)
                    else:
                        visit(inner.operation)

    visit(func)
    for op in found:
        op.erase()


def _rename(text: str) -> str:
    return _VALUE.sub(lambda m: f"%t_{m.group(1)}", text)


def _body_lines(asm: str) -> tuple[list[str], str]:
    """The func's body lines (one level of indent removed), renamed, and
    the value its return yields."""
    lines = asm.rstrip().splitlines()
    if not lines[0].startswith("func.func") or lines[-1].strip() != "}":
        raise TorchImportError("internal error: unexpected func.func text from pdg's MLIR")
    body = [line[2:] if line.startswith("  ") else line for line in lines[1:-1]]
    ret = body.pop().strip()
    m = re.fullmatch(r"return (%\S+) : .*", ret)
    if m is None:
        raise TorchImportError(f"internal error: the function does not end in a return: {ret}")
    return [_rename(line) for line in body], _rename(m.group(1))


def _emit(body: Body, args: list[Val], type_: TensorType, attrs) -> Val:
    fn: ImportedFunction = attrs["function"]
    bound = {}
    for i, (a, want) in enumerate(zip(args, fn.arg_types, strict=True)):
        if a.tensor == want:
            bound[f"t_arg{i}"] = a.name
        else:  # a static size where the function takes any: same data, its type
            body.line(f"%t_arg{i} = tensor.cast {a.name} : {a.tensor.mlir()} to {want.mlir()}")

    def bind(m: re.Match) -> str:
        return bound.get(m.group(1), m.group(0))

    for line in fn.lines:
        body.line(_VALUE.sub(bind, line))
    returned = bound.get(fn.returned[1:], fn.returned)
    # The function returns an argument (a node needs an op), or a dynamic
    # size where the node is typed static (a gradient typed like its read).
    if returned != fn.returned or fn.result != type_:
        return body.emit(f"tensor.cast {returned} : {fn.result.mlir()} to {type_.mlir()}", type_)
    return Val(fn.returned, fn.result)


TORCH_MODULE = OpSpec("torch_module", _emit)
