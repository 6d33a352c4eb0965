"""Where the native build's tools are: the C compiler that links, the
MLIR/LLVM binaries of the pinned wheels, and pdg's C runtime library.
Finding them loads no MLIR (the artifact cache asks for the runtime's
digest on every hit)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
from pathlib import Path


class ToolchainError(Exception):
    """A tool of the native build (mlir-translate, opt, llc, cc) is missing
    or failed."""


def linker() -> str:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise ToolchainError(
        "no C compiler found to link the compiled program (tried $CC, cc, gcc, clang); "
        "install one (e.g. `apt install gcc`)"
    )


def tool(package: str, name: str) -> str:
    """A binary shipped in the `mlir` or `llvm` wheel (pinned with pdg)."""
    spec = importlib.util.find_spec(package)
    for root in spec.submodule_search_locations if spec else []:
        path = Path(root) / "bin" / name
        if path.is_file():
            return str(path)
    raise ToolchainError(
        f"{name} is missing from the {package} wheel; run `bash tools/setup.sh` to "
        "install the pinned MLIR/LLVM tools"
    )


def c_runtime() -> tuple[Path, Path]:
    """(the static library, its include directory) of pdg's C runtime,
    installed beside the extension by the build (runtime/CMakeLists.txt)."""
    spec = importlib.util.find_spec("pdg._pdg_ext")
    root = Path(spec.origin).parent / "_runtime" if spec and spec.origin else None
    library = root / "lib" / "libpdg_runtime.a" if root else None
    if library is None or not library.is_file():
        raise ToolchainError(
            "pdg's C runtime (pdg/_runtime/lib/libpdg_runtime.a) is not installed; run "
            "`bash tools/setup.sh` (or `pip install .`) to build it"
        )
    return library, root / "include"


def openblas() -> Path | None:
    """The OpenBLAS library that the scipy-openblas32 wheel ships (a
    dependency of pdg); None where the wheel is not installed. Found without
    importing the package, which would load the library into the compiler."""
    spec = importlib.util.find_spec("scipy_openblas32")
    for root in spec.submodule_search_locations if spec else []:
        for candidate in sorted((Path(root) / "lib").glob("libscipy_openblas*.so")):
            if candidate.is_file():
                return candidate.resolve()
    return None


def mkl() -> Path | None:
    """Intel oneMKL's single dynamic library (libmkl_rt) as the `mkl` wheel
    installs it (the `mkl` extra: its files land in the environment's lib/,
    not in a package); None where it is not installed."""
    try:
        files = importlib.metadata.distribution("mkl").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name.startswith("libmkl_rt.so"):
            path = Path(file.locate()).resolve()
            if path.is_file():
                return path
    return None


BLAS_CHOICES = ("auto", "mkl", "openblas", "none")


def blas_library() -> Path | None:
    """The library whose sgemm large products call (pdg-call-blas), as
    $PDG_BLAS chooses: `mkl`, `openblas`, `none` (pdg's own kernels for
    every product), or `auto` (the default): oneMKL where the `mkl` extra is
    installed, else OpenBLAS. At a GRPO step's 32-row products MKL's sgemm
    runs 1.3-1.8x as fast as OpenBLAS's (bench/sgemm_libraries.py). The
    choice is made when a program compiles; its library path goes into the
    program."""
    choice = os.environ.get("PDG_BLAS", "auto").strip().lower() or "auto"
    if choice not in BLAS_CHOICES:
        raise ToolchainError(
            f"PDG_BLAS={os.environ['PDG_BLAS']!r} is not a BLAS pdg can call; "
            f"set it to one of {', '.join(BLAS_CHOICES)}"
        )
    if choice == "none":
        return None
    if choice in ("auto", "mkl"):
        found = mkl()
        if found is not None or choice == "auto":
            return found or openblas()
        raise ToolchainError(
            "PDG_BLAS=mkl, but oneMKL is not installed; install it with "
            "`pip install 'pdg[mkl]'`, or unset PDG_BLAS"
        )
    found = openblas()
    if found is None:
        raise ToolchainError(
            "PDG_BLAS=openblas, but the scipy-openblas32 wheel is not installed; run "
            "`bash tools/setup.sh`, or unset PDG_BLAS"
        )
    return found
