"""Math the LLVM dialect has no intrinsic for (erf: exact GELU) compiles,
through libm, and matches the interpreter; a native tool that fails while
compiling is a CompileError naming the tool and the step, not a raw
ToolchainError."""

from __future__ import annotations

import math

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.interpreter import interpret
from pdg.lowering import native
from pdg.lowering.artifact import CompileError, compile_module
from pdg.lowering.toolchain import ToolchainError


def _erf_program(dtype: str) -> pf.Program:
    prog = pf.Program("erf_" + dtype)
    b = prog.dim("b", launch="B")
    x = prog.input("x", (16,), dtype, domain=[b])
    prog.output("erf", pf.erf(x))
    # GELU, exact form (transformers' "gelu"), as pdg.nn builds it.
    prog.output("gelu", x * (pf.erf(x * (1.0 / math.sqrt(2.0))) + 1.0) * 0.5)
    return prog


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_01_erf_compiles_and_matches_the_interpreter(dtype, tmp_path):
    prog = _erf_program(dtype)
    compile_module(prog.build(), tmp_path / "erf.pdgx", gpu=False)
    real = np.float32 if dtype == "f32" else np.float64
    x = np.random.default_rng(0).uniform(-4, 4, (3, 16)).astype(real)
    got = pdg.runtime.load(tmp_path / "erf.pdgx").run({"x": x}, {"B": 3}).outputs
    ref = interpret(prog.build(), {"x": x}, symbols={"B": 3}).outputs
    exact = np.vectorize(math.erf)(x.astype(np.float64))
    tol = 2e-7 if dtype == "f32" else 1e-15
    for name in ("erf", "gelu"):
        assert got[name].dtype == real
        np.testing.assert_allclose(got[name], ref[name], rtol=tol, atol=tol)
    np.testing.assert_allclose(got["erf"], exact, rtol=tol, atol=tol)


@pytest.mark.usefixtures("no_compile_cache")  # native._run replaced
def test_02_a_failing_tool_is_a_compile_error_naming_tool_and_step(tmp_path, monkeypatch):
    def failing_run(args, what, *timings):
        raise ToolchainError(f"{what} failed:\nerror: no such intrinsic")

    monkeypatch.setattr(native, "_run", failing_run)
    with pytest.raises(CompileError) as caught:
        compile_module(_erf_program("f32").build(), tmp_path / "erf.pdgx", gpu=False)
    message = str(caught.value)
    assert "mlir-translate" in message and "native code" in message, message
    assert "no such intrinsic" in message
    assert not (tmp_path / "erf.pdgx").exists()


@pytest.mark.usefixtures("no_compile_cache")  # native.tool replaced
def test_03_a_missing_tool_is_a_compile_error(tmp_path, monkeypatch):
    def missing(package, name):
        raise ToolchainError(f"{name} is missing from the {package} wheel")

    monkeypatch.setattr(native, "tool", missing)
    with pytest.raises(CompileError, match=r"native code.*llvm-config is missing"):
        compile_module(_erf_program("f32").build(), tmp_path / "erf.pdgx", gpu=False)
