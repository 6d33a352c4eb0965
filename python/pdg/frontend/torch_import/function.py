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
    from pdg.ir import make_context, parse_text
    from pdg.ir.source import ParseFailure

    module = exported.module_name
    check_ops(imported, module)
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
    sig = check_function(func, module)
    expected = [p.type for p in exported.params] + exported.input_types
    if len(sig.args) != len(expected):
        raise TorchImportError(
            f"{module}: the imported function takes {len(sig.args)} arguments; the module has "
            f"{len(exported.params)} weights and {len(exported.input_types)} inputs"
        )
    lines, returned = _body_lines(func.get_asm(use_local_scope=True))
    return ImportedFunction(
        module_name=module,
        params=tuple(exported.params),
        arg_types=tuple(sig.args),
        result=sig.result,
        lines=tuple(lines),
        returned=returned,
        key=exported.key,
    )


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
    if returned != fn.returned:  # the function returns an argument: a node needs an op
        return body.emit(f"tensor.cast {returned} : {fn.result.mlir()} to {type_.mlir()}", type_)
    return Val(fn.returned, fn.result)


TORCH_MODULE = OpSpec("torch_module", _emit)
