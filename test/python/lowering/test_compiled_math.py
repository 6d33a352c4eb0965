"""Math the LLVM dialect has no intrinsic for (erf: exact GELU) compiles,
through libm, and matches the interpreter; log1p and (on request) exp as
inline polynomials are within a few ulps of float64; a native tool that fails while
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


def _ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of exact rounded to f32;
    below the smallest normal f32, in units of that number (a subnormal
    result may flush to 0)."""
    tiny = np.finfo(np.float32).tiny
    unit = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    unit = np.where(np.abs(exact) < tiny, tiny, unit)
    return np.abs(got.astype(np.float64) - exact) / unit


@pytest.mark.usefixtures("no_compile_cache")  # native.APPROXIMATE_MATH set
def test_04_exp_and_log1p_as_inline_polynomials_are_within_a_few_ulps(tmp_path, monkeypatch):
    # log1p is approximated by default (LLVM's log(1 + x) gives 0 for tiny x:
    # 2^23 ulps), exp on request (native.APPROXIMATE_MATH): inline code within
    # a few ulps of float64 over their whole range, the special values exact
    # (exp(-inf) = 0 is what masked softmax relies on), and no expf call left.
    assert "log1p" in native.APPROXIMATE_MATH
    monkeypatch.setattr(native, "APPROXIMATE_MATH", ("exp", "log1p"))
    n = 4096
    prog = pf.Program("approximated")
    b = prog.dim("b", launch="B")
    x = prog.input("x", (n,), "f32", domain=[b])
    prog.output("exp", pf.exp(x))
    prog.output("log1p", pf.log1p(x))
    compile_module(prog.build(), tmp_path / "m.pdgx", gpu=False)
    library = (tmp_path / "m.pdgx" / "program.so").read_bytes()
    assert b"expf" not in library  # (log1p still calls glibc's log)

    rng = np.random.default_rng(0)
    x = np.stack(
        [
            rng.uniform(-87.0, 88.5, n),  # every exp whose result is normal
            rng.uniform(-104.0, -87.0, n),  # subnormal results
            rng.uniform(-1.0, 1.0, n),
            np.exp(rng.uniform(-12.0, 40.0, n)) - 1.0,  # log1p over many scales, > -1
            np.copysign(np.exp(rng.uniform(-40.0, -5.0, n)), rng.uniform(-1, 1, n)),  # tiny
        ]
    ).astype(np.float32)
    got = pdg.runtime.load(tmp_path / "m.pdgx").run({"x": x}, {"B": len(x)}).outputs
    exact = x.astype(np.float64)
    assert _ulps(got["exp"][:3], np.exp(exact[:3])).max() <= 5
    assert _ulps(got["log1p"][2:], np.log1p(exact[2:])).max() <= 8

    special = [-np.inf, np.inf, np.nan, 0.0, -0.0, 89.0, -200.0, -1.0, -2.0, 3e38]
    special = np.array([special], np.float32)
    special = np.pad(special, ((0, 0), (0, n - special.shape[1])))
    out = pdg.runtime.load(tmp_path / "m.pdgx").run({"x": special}, {"B": 1}).outputs
    with np.errstate(all="ignore"):
        want_exp = np.exp(special[0, :10].astype(np.float64)).astype(np.float32)
        want_log1p = np.log1p(special[0, :10].astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out["exp"][0, :10], want_exp)
    np.testing.assert_array_equal(out["log1p"][0, :10], want_log1p)
