"""pdg-outline-bodies, the first lowering step: every node body of the
decode program (full, window, block attention; greedy and sampled) becomes
a func.func that upstream bufferization and LLVM lowering compile.

Booleans are stored as i8 by pdg-widen-i1-memrefs before
finalize-memref-to-llvm, which aborts on i1 memrefs in MLIR 22.1.8."""

from __future__ import annotations

import pytest
from decode_programs import small_decode
from mlir import ir
from mlir.passmanager import PassManager
from pdg import _ext
from pdg.ir import make_context, parse_text

TO_LLVM = (
    "one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,pdg-widen-i1-memrefs,"
    "finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-index-to-llvm,reconcile-unrealized-casts"
)


def run(module: ir.Module, pipeline: str) -> None:
    pm = PassManager("builtin.module", context=module.context)
    _ext.add_pass_pipeline(pm, pipeline)
    pm.run(module.operation)


@pytest.mark.parametrize(
    "pattern,seed", [("full", None), ("window:8", None), ("block:4", None), ("full", 3)]
)
def test_01_decode_bodies_outline_and_lower_to_llvm(pattern, seed):
    decode = small_decode(pattern, vocab=64, d_model=32, heads=4, max_len=64, sample_seed=seed)
    text = str(decode.program.build())
    module = parse_text(text, "decode", make_context())
    run(module, "pdg-outline-bodies")
    graph = next(op for op in module.body.operations if op.operation.name == "pdg.graph")
    nodes = [op for op in graph.regions[0].blocks[0].operations if op.operation.name == "pdg.node"]
    cases = sum(len(n.operation.regions) for n in nodes)
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    assert len(funcs) == cases
    assert all("pdg.bodies" in n.operation.attributes for n in nodes)

    graph.operation.erase()
    assert any("i1" in str(f.operation.attributes["function_type"]) for f in funcs)
    run(module, TO_LLVM)
    names = {op.operation.name for op in module.body.operations}
    assert "llvm.func" in names and all(n.startswith("llvm.") for n in names), names
