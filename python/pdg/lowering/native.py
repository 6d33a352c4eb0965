"""From the loops-and-memrefs module to native code: the LLVM dialect
(`to_llvm`), then an object file and a shared library (`build_library`)
whose entry `_mlir_ciface_pdg_<graph>` takes memref descriptors by pointer.
The library needs only libc and libm at run time (OpenBLAS, for large
products, is opened where it is there: runtime/lib/blas.c): copies become loops
(pdg-copies-to-linalg) instead of calls into MLIR's runner library, and
allocation goes through the counting allocator of pdg's C runtime
(`runtime/`, linked in statically)."""

from __future__ import annotations

import platform
import subprocess
import tempfile
from pathlib import Path

from mlir import ir
from mlir.passmanager import PassManager

from pdg import _ext
from pdg.ir.source import format_location

from .toolchain import ToolchainError, c_runtime, linker, openblas, tool

# Products from this size on call OpenBLAS's sgemm (pdg-call-blas) rather
# than pdg's register micro-kernels, where the wheel is installed: the
# multiply-adds (m * n * k) of one call (a tile of the pool's, for a large
# product), and its fewest rows and columns. Measured with bench/products.py
# on 2 cores: below about 2^17 multiply-adds both take the same time; a
# single row (a matrix-vector product) is no faster in sgemm; from 2 rows
# on sgemm wins, by 1.3x at 2 rows of gpt2's MLP (768 x 3072) to 3.5x at 8.
BLAS_MIN_FLOPS = 1 << 17
BLAS_MIN_DIM = 2
BLAS_HELPER = "pdg_blas_sgemm"


def _call_blas() -> str:
    """The pipeline's pdg-call-blas step; none without the library."""
    if openblas() is None:
        return ""
    return f"pdg-call-blas{{min-flops={BLAS_MIN_FLOPS} min-dim={BLAS_MIN_DIM}}},"


TO_LLVM = (
    # Large products become sgemm calls (in the tiles that the pool shares
    # out), the rest register micro-kernels.
    "pdg-copies-to-linalg,pdg-parallelize-large-ops,{call_blas}pdg-register-tile-contractions,"
    # Gathers are plain loads from here: those at indices from data get a
    # bounds check (the sites are read back by index_checks below).
    "func.func(convert-linalg-to-loops),pdg-check-indices,lower-affine,"
    # The driver's parallel loops: OpenMP ops, outlined by mlir-translate into
    # calls of the thread pool (pdg.lowering.threads). pdg-inline-alloca-scopes
    # drops the alloca scopes it wraps loop bodies in (they allocate nothing),
    # which would otherwise hold several blocks after convert-scf-to-cf.
    "convert-scf-to-openmp,pdg-inline-alloca-scopes,"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,pdg-widen-i1-memrefs,"
    "convert-vector-to-llvm,"
    "finalize-memref-to-llvm{{use-generic-functions use-aligned-alloc}},convert-math-to-llvm,"
    "convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-openmp-to-llvm,reconcile-unrealized-casts"
)


def to_llvm(module: ir.Module, check_indices: bool = True) -> list[dict]:
    """Lowers the loops-and-memrefs module to the LLVM dialect; returns its
    index checks (see index_checks). `check_indices=False` leaves reads at
    data-dependent indices unchecked: only to measure what the checks cost
    (bench/index_checks.py)."""
    first, rest = TO_LLVM.format(call_blas=_call_blas()).split(",lower-affine,", 1)
    if not check_indices:
        first = first.replace(",pdg-check-indices", "")
    pm = PassManager("builtin.module", context=module.context)
    _ext.add_pass_pipeline(pm, first)
    pm.run(module.operation)
    checks = index_checks(module)
    pm = PassManager("builtin.module", context=module.context)
    _ext.add_pass_pipeline(pm, "lower-affine," + rest)
    pm.run(module.operation)
    _tell_llvm_what_it_cannot_see(module)
    return checks


def index_checks(module: ir.Module) -> list[dict]:
    """The sites of pdg-check-indices by number: the node whose body holds
    each and where in the program (the runtime's message on a bad index)."""
    sites: dict[int, dict] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == (
            "pdg_index_fault"
        ):
            number = ir.IntegerAttr(op.operands[0].owner.attributes["value"]).value
            fn = op.parent
            while fn is not None and fn.name != "func.func":
                fn = fn.parent
            node = fn.attributes["pdg.node"] if fn is not None else None
            where = format_location(op.location)
            sites[number] = {
                "value": ir.StringAttr(node).value if node is not None else "",
                "location": "" if where.startswith("loc(") else where,
            }
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return [sites[k] for k in sorted(sites)]


# Functions the runtime and the support code call by name.
EXPORTED_PREFIXES = ("pdg_", "_mlir_ciface_")
ALLOCATORS = ("_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc")


def _tell_llvm_what_it_cannot_see(module: ir.Module) -> None:
    """Two facts LLVM needs to vectorize the bodies' loops:
    - a new buffer aliases nothing (the allocation functions are ours, not
      malloc, so LLVM does not know it): without it, every store into a
      temporary may change the inputs, and loops reload them;
    - the bodies are called only from this module (internal linkage): their
      memref strides, constants at every call site (1 for a point's last
      dim), then become constants inside them, and their loops unit-stride."""
    with module.context:
        noalias = ir.ArrayAttr.get([ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()})])
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        for op in module.body.operations:
            fn = op.operation
            if fn.name != "llvm.func":
                continue
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            if name in ALLOCATORS:
                fn.attributes["res_attrs"] = noalias
            elif len(fn.regions[0].blocks) and not name.startswith(EXPORTED_PREFIXES):
                fn.attributes["linkage"] = internal


def _run(args: list[str], what: str) -> None:
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise ToolchainError(f"{what} failed:\n{result.stderr.strip()}")


def _target() -> list[str]:
    """opt/llc flags for this machine: its triple (without one, LLVM's cost
    model sees no vector registers and nothing is vectorized) and a fixed
    CPU level, so that the library is the same on every x86-64 build host
    and runs on any x86-64 CPU with AVX2 and FMA (x86-64-v3)."""
    triple = subprocess.run(
        [tool("llvm", "llvm-config"), "--host-target"], capture_output=True, text=True
    ).stdout.strip()
    cpu = ["-mcpu=x86-64-v3"] if triple.startswith("x86_64") else []
    return [f"-mtriple={triple}", *cpu]


def _vector_math() -> tuple[list[str], list[str]]:
    """(opt flags, link flags) for vectorized exp/tanh/log calls from
    glibc's libmvec, where there is one (x86-64 Linux); else none."""
    if platform.machine() == "x86_64" and platform.system() == "Linux":
        return ["-vector-library=LIBMVEC"], ["-lmvec"]
    return [], []


def _blas_source(module_text: str) -> str:
    """C naming the OpenBLAS library to the runtime (runtime/lib/blas.c),
    where the program calls it: its absolute path, opened when the program
    first multiplies (so the program loads even where it is gone, and its
    products then run pdg's own loops)."""
    library = openblas()
    if library is None or f"@{BLAS_HELPER}(" not in module_text:
        return ""
    path = "".join(f"\\{b:03o}" for b in bytes(library))
    return f'\n__attribute__((visibility("default"))) const char pdg_blas_library[] = "{path}";\n'


def build_library(module: ir.Module, path: Path, c_source: str = "") -> None:
    """Compiles an LLVM-dialect module, and `c_source` (the per-program C of
    pdg.lowering.trampolines) if given, into a shared library at `path`:
    mlir-translate to LLVM IR, opt -O3 and llc for this machine's CPU, then
    the C compiler links them with pdg's C runtime.

    The tools run as processes (not MLIR's JIT in this one): external
    symbols (the udf trampolines) stay unresolved until the link, and a
    failing tool cannot take the compiler down with it."""
    target = _target()
    vector_opt, vector_link = _vector_math()
    runtime, include = c_runtime()
    text = str(module)
    c_source += _blas_source(text)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "program.mlir").write_text(text)
        _run(
            [
                tool("mlir", "mlir-translate"),
                "--mlir-to-llvmir",
                str(work / "program.mlir"),
                "-o",
                str(work / "program.ll"),
            ],
            "mlir-translate",
        )
        _run(
            [
                tool("llvm", "opt"),
                "-O3",
                *target,
                *vector_opt,
                str(work / "program.ll"),
                "-o",
                str(work / "program.bc"),
            ],
            "opt",
        )
        _run(
            [
                tool("llvm", "llc"),
                "-O3",
                *target,
                "-relocation-model=pic",
                "-filetype=obj",
                str(work / "program.bc"),
                "-o",
                str(work / "program.o"),
            ],
            "llc",
        )
        sources = [str(work / "program.o")]
        if c_source:
            (work / "support.c").write_text(c_source)
            sources.append(str(work / "support.c"))
        _run(
            [
                linker(),
                "-shared",
                "-fPIC",
                "-O2",
                f"-I{include}",
                "-o",
                str(path),
                *sources,
                # All of it: the loader calls functions no compiled code does.
                "-Wl,--whole-archive",
                str(runtime),
                "-Wl,--no-whole-archive",
                *vector_link,
                "-lm",
                "-ldl",
                "-lpthread",
            ],
            f"linking {path.name}",
        )
