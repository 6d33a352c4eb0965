"""The torch-mlir side of an import, run as a script in its own process.

torch-mlir carries its own, newer LLVM and MLIR: loaded in the same process
as pdg's `mlir` it gives silently wrong results, and its bytecode is
unreadable by pdg's MLIR. So this file imports nothing from pdg; the parent
(`importer.py`) runs it as `python worker.py REQUEST.json`, it reads the
saved torch.export program named there, lowers it to linalg on tensors and
writes the module as text (with locations) where the request says, beside
the list of the ops it holds and where each first appears, so that the
parent can refuse an op its MLIR cannot even parse (tm_tensor.*) by name and
source line. A failure writes a JSON error (what failed, torch-mlir's
diagnostics) and exits 1.
"""

from __future__ import annotations

import json
import sys
import traceback


def _decompositions():
    """torch-mlir's table, with torch's own decomposition of GELU: the one
    torch-mlir lowers tanh-GELU with is off by about 5e-5."""
    import torch
    from torch._decomp import get_decompositions
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    table = dict(get_decomposition_table())
    table.update(get_decompositions([torch.ops.aten.gelu.default]))
    return table


def _inventory(top) -> list[list[str]]:
    """[op name, location] of the first occurrence of each op, in order."""
    seen: dict[str, str] = {}

    def visit(op) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    seen.setdefault(inner.name, str(inner.location))
                    visit(inner)

    visit(top)
    return [[name, loc] for name, loc in seen.items()]


def main(request_path: str) -> int:
    with open(request_path) as f:
        request = json.load(f)
    try:
        import torch
        from torch_mlir import fx

        program = torch.export.load(request["program"])
        module = fx.export_and_import(
            program,
            output_type="linalg-on-tensors",
            decomposition_table=_decompositions(),
            func_name=request["func_name"],
        )
        text = module.operation.get_asm(enable_debug_info=True, large_elements_limit=None)
        ops = _inventory(module.operation)
    except Exception as e:  # reported to the parent as data, never a traceback there
        with open(request["error"], "w") as f:
            json.dump(
                {
                    "kind": type(e).__name__,
                    "message": str(e),
                    "traceback": traceback.format_exc(),
                },
                f,
            )
        return 1
    with open(request["output"], "w") as f:
        json.dump({"text": text, "ops": ops}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
