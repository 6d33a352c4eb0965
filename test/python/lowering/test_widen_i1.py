"""Boolean bodies, compiled: outlined, bufferized, booleans widened to i8
in memory (pdg-widen-i1-memrefs), lowered to LLVM and run by the JIT; the
results match NumPy."""

from __future__ import annotations

import ctypes

import numpy as np
import pdg.frontend as pdg
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.runtime import (
    get_ranked_memref_descriptor,
    make_nd_memref_descriptor,
    ranked_memref_to_numpy,
)
from pdg import _ext
from pdg.ir import make_context, parse_text

from .test_outline_bodies import TO_LLVM


def test_01_compiled_comparisons_and_logic_run_correctly():
    prog = pdg.Program("cmp")
    x = prog.input("x", (5,), "f32")
    y = prog.input("y", (5,), "f32")
    prog.output("both", (x > y) & (x > 0.0))
    ctx = make_context()
    module = parse_text(str(prog.build()), "cmp", ctx)

    def run(pipeline: str) -> None:
        pm = PassManager("builtin.module", context=ctx)
        _ext.add_pass_pipeline(pm, pipeline)
        pm.run(module.operation)

    run("pdg-outline-bodies")
    for op in list(module.body.operations):
        if op.operation.name == "pdg.graph":
            op.operation.erase()
        else:
            op.operation.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get(ctx)
            op.operation.attributes["sym_visibility"] = ir.StringAttr.get("public", ctx)
    run(TO_LLVM)
    engine = ExecutionEngine(module, opt_level=2)

    def call(name: str, *arrays: np.ndarray) -> np.ndarray:
        args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a))) for a in arrays]
        out = make_nd_memref_descriptor(1, ctypes.c_int8)()
        engine.invoke(name, ctypes.pointer(ctypes.pointer(out)), *args)
        return ranked_memref_to_numpy([out]).copy()

    xs = np.array([1, -2, 3, 0.5, 4], np.float32)
    ys = np.array([0, -3, 5, 0.0, 4], np.float32)
    greater = call("cmp_gt_0", xs, ys)
    positive = call("cmp_gt_1_0", xs)
    both = call("cmp_logical_and_0", greater, positive)
    np.testing.assert_array_equal(greater.astype(bool), xs > ys)
    np.testing.assert_array_equal(positive.astype(bool), xs > 0)
    np.testing.assert_array_equal(both.astype(bool), (xs > ys) & (xs > 0))
