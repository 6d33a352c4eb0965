"""The runtime's sgemm helper (runtime/lib/blas.c) on its own, through
ctypes: C += A B for operands in every layout a compiled product may hand
it (rows or columns contiguous, views with larger leading dims, single
rows and columns), against NumPy, with OpenBLAS and with oneMKL; with
`overwrite`, C = A B, C's old values never read; layouts sgemm cannot
take, and a missing library, are declined (0) with C untouched."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest
from pdg.lowering.toolchain import c_runtime, linker, mkl, openblas

F32 = np.dtype(np.float32).itemsize


def build(directory: Path, library: Path | None) -> ctypes.CDLL:
    """The runtime linked as a program links it, naming `library` (or
    nothing) as its BLAS."""
    archive, include = c_runtime()
    source = directory / "names.c"
    source.write_text(
        f'const char pdg_blas_library[] = "{library}";\n' if library else "int pdg_unused;\n"
    )
    out = directory / "libblas.so"
    subprocess.run(
        [linker(), "-shared", "-fPIC", "-O1", f"-I{include}", "-o", str(out), str(source),
         "-Wl,--whole-archive", str(archive), "-Wl,--no-whole-archive", "-ldl", "-lpthread"],
        check=True,
    )  # fmt: skip
    lib = ctypes.CDLL(str(out))
    lib.pdg_blas_sgemm.restype = ctypes.c_int32
    lib.pdg_blas_sgemm.argtypes = (
        [ctypes.c_int64] * 3 + ([ctypes.c_void_p] + [ctypes.c_int64] * 3) * 3 + [ctypes.c_int32]
    )
    return lib


@pytest.fixture(scope="module", params=["openblas", "mkl"])
def blas(request, tmp_path_factory):
    """The runtime naming OpenBLAS, then oneMKL (the `mkl` extra)."""
    library = openblas() if request.param == "openblas" else mkl()
    if library is None:
        pytest.skip(f"{request.param} is not installed")
    return build(tmp_path_factory.mktemp("blas"), library)


def operand(a: np.ndarray):
    """(base pointer, offset, row stride, column stride) in elements."""
    return [a.ctypes.data, 0, a.strides[0] // F32, a.strides[1] // F32]


def sgemm(lib, a: np.ndarray, b: np.ndarray, c: np.ndarray, overwrite: bool = False) -> int:
    (m, k), n = a.shape, b.shape[1]
    return lib.pdg_blas_sgemm(m, n, k, *operand(a), *operand(b), *operand(c), int(overwrite))


def layouts(rows: int, cols: int, rng) -> dict[str, np.ndarray]:
    """One matrix's values in the layouts a compiled product may use."""
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    wide = np.zeros((rows, cols + 5), np.float32)
    wide[:, :cols] = x
    tall = np.zeros((rows + 3, cols), np.float32, order="F")
    tall[:rows] = x
    return {
        "rows": x,
        "columns": np.asfortranarray(x),
        "rows_view": wide[:, :cols],
        "columns_view": tall[:rows],
    }


@pytest.mark.parametrize("m, n, k", [(8, 96, 40), (1, 33, 17), (19, 1, 23), (5, 7, 1)])
def test_every_layout_adds_the_product(blas, m, n, k):
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    for la, a in layouts(m, k, rng).items():
        for lb, b in layouts(k, n, rng).items():
            for lc, c in layouts(m, n, rng).items():
                expected = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
                assert sgemm(blas, a, b, c) == 1, (la, lb, lc)
                np.testing.assert_allclose(
                    c, expected, rtol=1e-5, atol=1e-5, err_msg=f"{la} {lb} {lc}"
                )


@pytest.mark.parametrize("m, n, k", [(8, 96, 40), (19, 1, 23)])
def test_overwrite_writes_the_product_without_reading_c(blas, m, n, k):
    # C starts as NaN (what a dropped fill of zeros would have replaced):
    # any read of it would show in the result. Both of C's layouts, as
    # sgemm writes C directly and as C^T = B^T A^T.
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    for lc, c in layouts(m, n, rng).items():
        c[...] = np.nan
        assert sgemm(blas, a, b, c, overwrite=True) == 1, lc
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5, err_msg=lc)


def test_nothing_to_sum(blas):
    # k = 0: adding adds nothing (made); overwriting would have to zero C,
    # which the caller's fill does, so it declines with C untouched.
    a, b = np.zeros((4, 0), np.float32), np.zeros((0, 5), np.float32)
    c = np.full((4, 5), 3.0, np.float32)
    assert sgemm(blas, a, b, c) == 1
    assert sgemm(blas, a, b, c, overwrite=True) == 0
    assert (c == 3.0).all()


def test_a_layout_without_a_contiguous_dim_is_declined(blas):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 8)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)[::2, ::2]  # strides 32 and 2
    c = np.zeros((8, 8), np.float32)
    assert sgemm(blas, a, b, c) == 0
    assert not c.any()


def test_without_the_library_every_call_is_declined(tmp_path):
    for name, library in (
        ("none", None),
        ("gone", tmp_path / "gone" / "libscipy_openblas.so"),
        ("foreign", "libm.so.6"),  # opens, but has neither library's sgemm
    ):
        (tmp_path / name).mkdir()
        lib = build(tmp_path / name, library)
        a, b, c = (
            np.ones((4, 4), np.float32),
            np.ones((4, 4), np.float32),
            np.zeros((4, 4), np.float32),
        )
        assert lib.pdg_blas_available() == 0
        assert sgemm(lib, a, b, c) == 0
        assert not c.any()
