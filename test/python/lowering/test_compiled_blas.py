"""Large matrix products through a BLAS's sgemm (pdg-call-blas and the C
runtime's runtime/lib/blas.c), against NumPy in float64: the products that
reach the thresholds of pdg.lowering.native call it (the runtime counts the
calls, pdg_blas_calls), smaller ones and products of at most 8 rows run
pdg's own kernels (a few rows stream the weights, which sgemm would copy
into blocks first), the library (OpenBLAS or oneMKL, as $PDG_BLAS
chooses) runs on the calling thread only, and a program whose library is
gone still loads and runs its own loops."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pdg.frontend as pf
import pdg.runtime
import pytest
from pdg.ir import make_context, parse_text
from pdg.lowering import native
from pdg.lowering.artifact import CompileError, compile_module
from pdg.lowering import toolchain
from pdg.lowering.toolchain import blas_library, mkl, openblas
from sample_programs import contraction_program

pytestmark = pytest.mark.skipif(openblas() is None, reason="scipy-openblas32 not installed")


LIBRARIES = [
    pytest.param("openblas"),
    pytest.param(
        "mkl", marks=pytest.mark.skipif(mkl() is None, reason="the mkl extra is not installed")
    ),
]


@pytest.fixture(params=LIBRARIES)
def library(request, monkeypatch) -> str:
    """Each BLAS pdg can call, chosen as a user chooses it ($PDG_BLAS)."""
    monkeypatch.setenv("PDG_BLAS", request.param)
    return request.param


def product(k: int, n: int):
    """y = x @ w, the rows of x (a launch dim) folded into one product."""
    prog = pf.Program("product")
    b = prog.dim("b", launch="B", max=1 << 12)
    x = prog.input("x", (k,), "f32", domain=[b])
    w = prog.input("w", (k, n), "f32")
    prog.output("y", pf.matmul(x, w).named("y"))
    return prog


def calls(program) -> int:
    return ctypes.c_int64.in_dll(program._entry.library, "pdg_blas_calls").value


def run_product(tmp_path, k: int, n: int, rows: int):
    path = tmp_path / f"product-{k}x{n}.pdgx"
    compile_module(product(k, n).build(), path, gpu=False, vectorize=True)
    program = pdg.runtime.load(path)
    rng = np.random.default_rng(k * n + rows)
    x = rng.standard_normal((rows, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    y = np.asarray(program.run({"x": x, "w": w}, {"B": rows}).outputs["y"])
    return program, y, x.astype(np.float64) @ w.astype(np.float64)


def assert_close(got, expected, k: int):
    # float32 sums of k products, in whatever order sgemm blocks them.
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6 * np.sqrt(k) * scale)


@pytest.mark.parametrize(
    "rows, k, n",
    [
        (16, 768, 3072),  # gpt2's MLP at 16 tokens: 48 tiles of 64 columns
        (37, 300, 200),  # odd sizes: tiles' edges, rows left over by the 4 x 16 kernel
    ],
)
def test_large_products_call_sgemm_and_match_numpy(tmp_path, library, rows, k, n):
    program, got, expected = run_product(tmp_path, k, n, rows)
    # The chosen library's path is in the program (see the test without it).
    path = openblas() if library == "openblas" else mkl()
    assert bytes(path) in (tmp_path / f"product-{k}x{n}.pdgx" / "program.so").read_bytes()
    assert calls(program) > 0
    assert_close(got, expected, k)


def test_weight_gradient_calls_sgemm_with_a_transposed_factor(tmp_path):
    """g[k, n] = sum over the batch of x[b, k] y[b, n]: x is read down its
    columns (A transposed for sgemm)."""
    k, n, batch = 128, 256, 64
    path = tmp_path / "contraction.pdgx"
    compile_module(parse_text(contraction_program(k, n), "c", make_context()), path, gpu=False)
    program = pdg.runtime.load(path)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((batch, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    got = program.run({"x": x, "w": w}, {"B": batch}).outputs
    y = x.astype(np.float64) @ w.astype(np.float64)
    assert calls(program) > 0
    assert_close(got["y"], y, k)
    assert_close(got["g"], x.T.astype(np.float64) @ y, batch)


@pytest.mark.parametrize(
    "rows, k, n",
    [
        (16, 16, 16),  # 4096 multiply-adds: far below BLAS_MIN_FLOPS
        (1, 768, 3072),  # one row, a matrix-vector product: below BLAS_MIN_DIM
        # 8 rows (decode at batch 8): the weights streamed, in 8 tiles of 96
        # of their rows summed after (pdg-parallelize-large-ops).
        (8, 768, 3072),
        # 5 rows in 8 tiles of 132 summed rows (the last one 101: a row of
        # the weights past the kernel's steps of 4): the streamed rows
        # [0, 4), and the row and the 1000 % 16 columns the kernel leaves.
        (5, 1025, 1000),
    ],
)
def test_small_products_run_the_micro_kernel(tmp_path, rows, k, n):
    assert rows * k * n < native.BLAS_MIN_FLOPS or rows < native.BLAS_MIN_DIM
    program, got, expected = run_product(tmp_path, k, n, rows)
    assert calls(program) == 0
    assert_close(got, expected, k)


def test_the_threshold_decides(tmp_path, monkeypatch):
    """The same product, once under the threshold and once at it. The
    threshold is per call: the pool's tiles of this product (cut along the
    weights' columns, 64 each: pdg-parallelize-large-ops) are 16 x 64 x 64."""
    rows, k, n = 16, 64, 256
    tile = rows * k * 64
    monkeypatch.setattr(native, "BLAS_MIN_FLOPS", tile + 1)
    program, got, expected = run_product(tmp_path / "under", k, n, rows)
    assert calls(program) == 0
    assert_close(got, expected, k)
    monkeypatch.setattr(native, "BLAS_MIN_FLOPS", tile)
    program, got, expected = run_product(tmp_path / "over", k, n, rows)
    assert calls(program) > 0
    assert_close(got, expected, k)


def fixed_product(rows: int, k: int, n: int):
    """y = x @ w with every size known when compiling: one body call,
    whose product pdg-parallelize-large-ops cuts for the pool."""
    prog = pf.Program("fixed_product")
    x = prog.input("x", (rows, k), "f32")
    w = prog.input("w", (k, n), "f32")
    prog.output("y", pf.matmul(x, w).named("y"))
    return prog


@pytest.mark.parametrize(
    "tiles, expected_calls",
    [
        (2, 2),  # BLAS_TILES: two halves of 1536 columns, one sgemm call each
        (3, 3),  # ceil(3072 / 3) = 1024, a multiple of 64
        (0, 48),  # as any other op: 64 columns a tile
    ],
)
def test_a_product_that_calls_sgemm_is_cut_into_blas_tiles(
    tmp_path, monkeypatch, tiles, expected_calls
):
    """A product whose sizes are known and reach the thresholds is cut
    into at most native.BLAS_TILES tiles for the pool, each one sgemm call
    (the library runs a few wide calls faster than many narrow ones)."""
    rows, k, n = 32, 768, 3072
    monkeypatch.setattr(native, "BLAS_TILES", tiles)
    path = tmp_path / "fixed.pdgx"
    compile_module(fixed_product(rows, k, n).build(), path, gpu=False)
    program = pdg.runtime.load(path)
    rng = np.random.default_rng(tiles)
    x = rng.standard_normal((rows, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    got = np.asarray(program.run({"x": x, "w": w}, {}).outputs["y"])
    assert calls(program) == expected_calls
    assert_close(got, x.astype(np.float64) @ w.astype(np.float64), k)


def test_the_blas_runs_on_the_calling_thread(tmp_path, library):
    """pdg's pool runs the tiles; the BLAS must not start its own threads
    under each one."""
    program, _, _ = run_product(tmp_path, 768, 3072, 16)
    assert calls(program) > 0
    if library == "openblas":
        opened = ctypes.CDLL(str(openblas()))  # the instance the program opened
        assert opened.scipy_openblas_get_num_threads() == 1
    else:
        opened = ctypes.CDLL(str(mkl()))
        assert opened.MKL_Get_Max_Threads() == 1
        # The sequential layer: no OpenMP runtime came in with it.
        maps = open("/proc/self/maps").read()
        assert "libmkl_sequential" in maps and "libiomp5" not in maps


def test_a_program_whose_library_is_gone_runs_its_own_loops(tmp_path, monkeypatch):
    """The library is opened at the first product, not linked: compiled
    against a path that is not there (the wheel removed since), the program
    loads, declines every call and computes the same products."""
    monkeypatch.setattr(native, "blas_library", lambda: tmp_path / "gone" / "libscipy_openblas.so")
    program, got, expected = run_product(tmp_path, 768, 3072, 16)
    assert calls(program) == 0
    assert_close(got, expected, 768)


def test_without_the_wheel_no_call_is_compiled(tmp_path, monkeypatch):
    library = bytes(blas_library())
    monkeypatch.setattr(native, "blas_library", lambda: None)
    program, got, expected = run_product(tmp_path, 768, 3072, 16)
    assert library not in (tmp_path / "product-768x3072.pdgx" / "program.so").read_bytes()
    assert calls(program) == 0
    assert_close(got, expected, 768)


def test_pdg_blas_chooses_the_library(tmp_path, monkeypatch):
    """auto: MKL where the extra is installed, else OpenBLAS; none: no
    call compiled, every product in pdg's own kernels."""
    monkeypatch.delenv("PDG_BLAS", raising=False)
    assert blas_library() == (mkl() or openblas())
    monkeypatch.setattr(toolchain, "mkl", lambda: None)
    assert blas_library() == openblas()
    monkeypatch.setenv("PDG_BLAS", "none")
    assert blas_library() is None
    program, got, expected = run_product(tmp_path, 768, 3072, 16)
    code = (tmp_path / "product-768x3072.pdgx" / "program.so").read_bytes()
    assert all(bytes(p) not in code for p in (openblas(), mkl()) if p)
    assert calls(program) == 0
    assert_close(got, expected, 768)


@pytest.mark.parametrize(
    "setting, message",
    [
        ("sgemm", "PDG_BLAS='sgemm' is not a BLAS pdg can call; set it to one of auto, mkl"),
        ("mkl", "PDG_BLAS=mkl, but oneMKL is not installed; install it with `pip install"),
    ],
)
@pytest.mark.parametrize("cached", [False, True])
def test_a_wrong_pdg_blas_is_a_clear_error(tmp_path, monkeypatch, setting, message, cached):
    """Refused before any work, with or without a compile cache (whose key
    holds the library)."""
    if cached:
        monkeypatch.setenv("PDG_COMPILE_CACHE", str(tmp_path / "cache"))
    else:
        monkeypatch.delenv("PDG_COMPILE_CACHE", raising=False)
    monkeypatch.setenv("PDG_BLAS", setting)
    monkeypatch.setattr(toolchain, "mkl", lambda: None)
    with pytest.raises(CompileError, match=re.escape(message)):
        compile_module(product(64, 64).build(), tmp_path / "p.pdgx", gpu=False, vectorize=True)
    assert not (tmp_path / "p.pdgx").exists()
