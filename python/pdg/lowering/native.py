"""From the loops-and-memrefs module to native code: the LLVM dialect
(`to_llvm`), then an object file and a shared library (`build_library`)
whose entry `_mlir_ciface_pdg_<graph>` takes memref descriptors by pointer.
The library needs only libc and libm at run time (OpenBLAS, for large
products, is opened where it is there: runtime/lib/blas.c): copies become loops
(pdg-copies-to-linalg) instead of calls into MLIR's runner library, and
allocation goes through the counting allocator of pdg's C runtime
(`runtime/`, linked in statically)."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from mlir import ir

from pdg.ir.source import format_location
from pdg.passes import pipelines
from pdg.passes.pipelines import run_registered

from .toolchain import ToolchainError, blas_library, c_runtime, linker, tool

# Products from this size on call the BLAS's sgemm (pdg-call-blas;
# toolchain.blas_library) rather than pdg's register micro-kernels: the
# multiply-adds (m * n * k) of one call (a tile of the pool's, for a large
# product), and its fewest rows and columns. Measured with bench/products.py
# on 2 cores: below about 2^17 multiply-adds both take the same time.
# Against the register tiles (which walk B in strips of 16 columns) sgemm
# won from 2 rows on, by 1.3x at 2 rows of gpt2's MLP (768 x 3072) to 3.5x
# at 8; but up to 8 rows pdg now streams B (pdg-register-tile-contractions'
# kStreamMaxRows; the tied head's table in dot form, read once for all the
# rows) where sgemm copies all of it into blocks first: decode at
# batch 8, vectorized (`bench/scale.py --batch 8 --impls pdg-vec`), ran
# 1.2-1.5x faster with these products out of sgemm (gpt2-124m 46.9 -> 39.7
# ms per step, qwen2.5-0.5b 215 -> 146).
BLAS_MIN_FLOPS = 1 << 17
BLAS_MIN_DIM = 9
BLAS_HELPER = "pdg_blas_sgemm"
# A product that calls sgemm is cut into at most BLAS_TILES tiles for the
# pool's threads (pdg-parallelize-large-ops' blas-tiles), each one call:
# sgemm runs a few wide calls faster than many narrow ones (each reads all
# of A again, and B in short runs). Two per core of the compiling machine,
# so that a thread held up elsewhere leaves the others work; the number is
# in the compile cache's key, and a program's results do not depend on the
# threads it runs on. A GRPO call at gpt2-124m on 2 cores took about
# 0.95x the time (0.83-1.02x over three runs) of the tiles of any other op
# (64 columns, or 128-384 in a body of the driver's loop), at small-bpe
# 0.91x (bench/RESULTS.md). 0: as any other op.
BLAS_TILES = 2 * len(os.sched_getaffinity(0))

# Ops in a body the driver calls inside its parallel loop over the
# sequences are split into tiles from SPLIT_IN_LOOP_MIN_WORK points on,
# into at most SPLIT_IN_LOOP_TILES. At batch 1 that loop runs on one thread
# (pdg-conditional-forks) and the tiles share out the threads, each
# streaming its part of the weights. Few, wide tiles: a tile of 64 columns
# reads each row of the weights in runs of 256 bytes, which cost 1.2-1.3x
# the whole product's time on one thread (bench/matvec_split.py, load 11-12
# on 2 cores). On 2 quiet cores (bench/RESULTS.md, `bench/scale.py --impls
# pdg,pdg-unsplit,torch`) decode at batch 1 runs 1.3-1.6x faster split,
# and GRPO at small-bpe (one microbatch per step, a loop of one point)
# 1.6x; on a machine whose other jobs hold the cores (load ~12) batch 1
# ran 1.10-1.22x slower, each of a token's ~73 forks waiting for a thread.
# The tiles run only where that loop has one point; with more, the body
# runs a copy of the op whole (the runtime's pdg_ops_split).
# -1: never split (`--impls pdg-unsplit`).
SPLIT_IN_LOOP_MIN_WORK = 65536
SPLIT_IN_LOOP_SPLIT_FROM = 65536  # what the tests use to split whatever the default
SPLIT_IN_LOOP_TILES = 8

# Math ops compiled as inline polynomials (pdg-approximate-math) instead of
# glibc calls; () keeps the calls. log1p: LLVM lowers it as log(1 + x),
# which is 0 below x = 6e-8 (DPO's softplus at a large margin); upstream's
# approximation keeps the small x (and still calls log). exp is not in by
# default: inline, it is within 5 ulps and the same on every machine, but
# no faster at GRPO's 32 tokens (53.4 against 53.1 ms per call), and its
# different rounding moved Adam's moments past the compiled-against-
# interpreter test's 1e-5. log is not either: its approximation is off
# for subnormal inputs.
APPROXIMATE_MATH: tuple[str, ...] = ("log1p",)


# Transposes that move the contiguous dim (the weights' W^T copies for the
# input gradients, once per iteration) are copied in blocks of
# TRANSPOSE_TILE x TRANSPOSE_TILE elements (pdg-tile-transposes); 0: as one
# loop nest, whose stores go down the output's columns.
TRANSPOSE_TILE = 16


def _call_blas() -> tuple[int, int] | None:
    """pdg-call-blas's thresholds; None (no calls) without the library."""
    if blas_library() is None:
        return None
    return BLAS_MIN_FLOPS, BLAS_MIN_DIM


# The module settings above that change the code a compile emits.
CODE_SETTINGS = (
    "BLAS_MIN_FLOPS",
    "BLAS_MIN_DIM",
    "BLAS_TILES",
    "SPLIT_IN_LOOP_MIN_WORK",
    "SPLIT_IN_LOOP_TILES",
    "APPROXIMATE_MATH",
    "TRANSPOSE_TILE",
)


def code_settings() -> str:
    """CODE_SETTINGS and the BLAS library, read now (a test or a benchmark
    sets them between compiles): part of the compile cache's key."""
    values = " ".join(f"{name}={globals()[name]!r}" for name in CODE_SETTINGS)
    return f"blas_lib={blas_library()} {values}"


def to_llvm(module: ir.Module, check_indices: bool = True) -> list[dict]:
    """Lowers the loops-and-memrefs module to the LLVM dialect; returns its
    index checks (see index_checks). `check_indices=False` leaves reads at
    data-dependent indices unchecked: only to measure what the checks cost
    (bench/index_checks.py)."""
    run_registered(
        module,
        pipelines.to_loops(
            check_indices,
            _call_blas(),
            BLAS_TILES,
            SPLIT_IN_LOOP_MIN_WORK,
            SPLIT_IN_LOOP_TILES,
            APPROXIMATE_MATH,
            TRANSPOSE_TILE,
        ),
    )
    checks = index_checks(module)
    _note_destinations(module)
    run_registered(module, pipelines.TO_LLVM)
    _tell_llvm_what_it_cannot_see(module)
    return checks


# The LLVM function attribute naming the parameter that carries a body's
# destination buffer (its aligned pointer), set before the conversion.
DESTINATION = "pdg.destination_param"


def _note_destinations(module: ir.Module) -> None:
    """Notes, on each node body (`pdg.node`, named `..._into`), which
    parameter of its LLVM form carries the aligned pointer of its
    destination, its last argument: memref.load/store then see, after the
    conversion, only scalars (a memref of rank r becomes 3 + 2r of them:
    the allocated and aligned pointers, the offset, the sizes, the strides).
    _tell_llvm_what_it_cannot_see marks it noalias."""
    with module.context:
        for op in module.body.operations:
            fn = op.operation
            if fn.name != "func.func" or "pdg.node" not in fn.attributes:
                continue
            if not ir.StringAttr(fn.attributes["sym_name"]).value.endswith("_into"):
                continue
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
            inputs = list(ftype.inputs)
            if not inputs or not isinstance(inputs[-1], ir.MemRefType):
                continue
            # Memrefs become 3 + 2 * rank parameters, index and scalars one.
            shaped = [t for t in inputs if isinstance(t, ir.ShapedType)]
            if not all(isinstance(t, ir.MemRefType) for t in shaped):
                continue
            params = sum(3 + 2 * t.rank if isinstance(t, ir.MemRefType) else 1 for t in inputs)
            aligned = params - (2 + 2 * inputs[-1].rank)
            i64 = ir.IntegerType.get_signless(64)
            fn.attributes[DESTINATION] = ir.IntegerAttr.get(i64, aligned)


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
            if fn is not None and "pdg.shared_by" in fn.attributes:
                # The function computes these nodes too (lower._shared_bodies).
                others = ir.ArrayAttr(fn.attributes["pdg.shared_by"])
                sites[number]["shared_by"] = [ir.StringAttr(x).value for x in others]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return [sites[k] for k in sorted(sites)]


# Functions the runtime and the support code call by name.
EXPORTED_PREFIXES = ("pdg_", "_mlir_ciface_")
ALLOCATORS = ("_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc")


def _tell_llvm_what_it_cannot_see(module: ir.Module) -> None:
    """Facts LLVM needs to vectorize the bodies' loops, and to compile the
    entry in time linear in its size:
    - a new buffer aliases nothing (the allocation functions are ours, not
      malloc, so LLVM does not know it): without it, every store into a
      temporary may change the inputs, and loops reload them;
    - nor does a body's destination alias the views it reads: the driver
      passes each body its own value's slot, never a view another argument
      reaches (a value updated in place is read through the destination
      itself, bodies.wrapper_text). Without it, a loop of a small constant
      trip count that LLVM unrolls whole before vectorizing (an elementwise
      op over a row of 32) stays scalar: the SLP vectorizer may not move a
      load above a store that might overwrite it;
    - the bodies are called only from this module (internal linkage): their
      memref strides, constants at every call site (1 for a point's last
      dim), then become constants inside them, and their loops unit-stride;
    - the entry `pdg_<graph>` is called only by its C interface
      `_mlir_ciface_pdg_<graph>` (the runtime calls that): inlined there,
      the call that passed every input's descriptor as scalars (some
      thousand arguments for gpt2-124m, which llc's instruction selection
      handles in time quadratic in their number) is gone. (mlir-translate
      gives the parallel regions it outlines from the entry the entry's
      attributes: they are called through the thread pool, never inlined.)"""
    with module.context:
        noalias = ir.ArrayAttr.get([ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()})])
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        functions = {
            ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.body.operations
            if op.operation.name == "llvm.func"
        }
        defined = {name for name, fn in functions.items() if len(fn.regions[0].blocks)}
        apart = ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()})
        for name, fn in functions.items():
            if DESTINATION in fn.attributes:
                _mark_param(fn, ir.IntegerAttr(fn.attributes[DESTINATION]).value, apart)
            if name in ALLOCATORS:
                fn.attributes["res_attrs"] = noalias
            elif name in defined and not name.startswith(EXPORTED_PREFIXES):
                fn.attributes["linkage"] = internal
            elif name in defined and "_mlir_ciface_" + name in defined:  # an entry
                fn.attributes["linkage"] = internal
                fn.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("alwaysinline")])


def _mark_param(fn: ir.Operation, index: int, attrs: ir.DictAttr) -> None:
    """Gives parameter `index` of the llvm.func `fn` the attributes `attrs`."""
    count = len(fn.regions[0].blocks[0].arguments)
    old = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes else []
    old += [ir.DictAttr.get({})] * (count - len(old))
    old[index] = attrs
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(old)


def _run(args: list[str], what: str, seconds: dict[str, float]) -> None:
    """Runs a tool; its wall time goes into `seconds` under `what`."""
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True)
    seconds[what] = time.perf_counter() - start
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
    """C naming the BLAS library to the runtime (runtime/lib/blas.c), where
    the program calls it: its absolute path, opened when the program first
    multiplies (so the program loads even where it is gone, and its
    products then run pdg's own loops)."""
    library = blas_library()
    if library is None or f"@{BLAS_HELPER}(" not in module_text:
        return ""
    path = "".join(f"\\{b:03o}" for b in bytes(library))
    return f'\n__attribute__((visibility("default"))) const char pdg_blas_library[] = "{path}";\n'


def _keep_llvm_ir(translated: Path, text: str) -> None:
    """With $PDG_KEEP_LLVM_IR=DIR, a copy of the LLVM IR that opt is about
    to optimize goes into DIR (made if missing) as program-<hash of the
    module>.ll, for profiling the native tools on one program (`opt -O3
    --time-trace`, `llvm-extract --func=NAME`)."""
    keep = os.environ.get("PDG_KEEP_LLVM_IR")
    if not keep:
        return
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    Path(keep).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(translated, Path(keep) / f"program-{digest}.ll")


def build_library(module: ir.Module, path: Path, c_source: str = "") -> dict[str, float]:
    """Compiles an LLVM-dialect module, and `c_source` (the per-program C of
    pdg.lowering.trampolines) if given, into a shared library at `path`:
    mlir-translate to LLVM IR, opt -O3 and llc for this machine's CPU, then
    the C compiler links them with pdg's C runtime.

    The tools run as processes (not MLIR's JIT in this one): external
    symbols (the udf trampolines) stay unresolved until the link, and a
    failing tool cannot take the compiler down with it. Returns each
    tool's time in seconds, by name (mlir-translate, opt, llc, linking)."""
    target = _target()
    vector_opt, vector_link = _vector_math()
    runtime, include = c_runtime()
    seconds: dict[str, float] = {}
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
            seconds,
        )
        _keep_llvm_ir(work / "program.ll", text)
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
            seconds,
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
            seconds,
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
            seconds,
        )
    return {what.split()[0]: s for what, s in seconds.items()}
