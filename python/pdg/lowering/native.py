"""From the loops-and-memrefs module to native code: the LLVM dialect
(`to_llvm`), then an object file and a shared library (`build_library`)
whose entry `_mlir_ciface_pdg_<graph>` takes memref descriptors by pointer.
The library needs only libc and libm at run time: copies become loops
(pdg-copies-to-linalg) instead of calls into MLIR's runner library."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager

from pdg import _ext

TO_LLVM = (
    "pdg-copies-to-linalg,func.func(convert-linalg-to-loops),lower-affine,"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,pdg-widen-i1-memrefs,"
    "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
    "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts"
)


def to_llvm(module: ir.Module) -> None:
    pm = PassManager("builtin.module", context=module.context)
    _ext.add_pass_pipeline(pm, TO_LLVM)
    pm.run(module.operation)


class ToolchainError(Exception):
    """No C compiler to link the shared library with."""


def _linker() -> str:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise ToolchainError(
        "no C compiler found to link the compiled program (tried $CC, cc, gcc, clang); "
        "install one (e.g. `apt install gcc`)"
    )


def build_library(module: ir.Module, path: Path, opt_level: int = 3) -> None:
    """Compiles an LLVM-dialect module to a shared library at `path`."""
    engine = ExecutionEngine(module, opt_level=opt_level)
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "program.o"
        engine.dump_to_object_file(str(obj))
        result = subprocess.run(
            [_linker(), "-shared", "-o", str(path), str(obj), "-lm"],
            capture_output=True,
            text=True,
        )
    if result.returncode != 0:
        raise ToolchainError(f"linking {path.name} failed:\n{result.stderr}")
