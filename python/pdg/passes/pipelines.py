"""Every pass pipeline of the compiler, in the order compile_module runs
them (docs/compiler.md tells the stages; docs/passes.md each pdg pass).
The lowering modules take their pipelines from here and nowhere else.
(pipeline.py, beside this file, is the runner for pipelines that mix
Python passes in.)

1. optimize()   the whole graph, pdg -> pdg, then its storage plan and
                schedule (Python isl passes): run by pipeline.run_pipeline
2. OUTLINE      pdg-lower-to-loops' first step: node bodies become funcs
3. BUFFERIZE    the wrapped bodies, tensors -> memrefs
4. DEALLOCATE   then their temporaries: on the stack or freed at last use
5. TO_KERNELS,  each body as a GPU kernel, then PTX per architecture
   TO_PTX
6. TO_LOOPS,    loops and memrefs -> the LLVM dialect, in two parts so the
   TO_LLVM      index-check sites can be read between them
"""

from __future__ import annotations

from mlir import ir
from mlir.passmanager import PassManager

from pdg import _ext


def optimize(vectorize_dim: str | None = None, batch_steps: bool = False) -> str:
    """Whole-graph optimization and planning before the lowering; with
    `vectorize_dim`, that parallel dim is folded into the point type.
    A sum over a dynamic dim's steps (a weight's gradient over the decode
    steps) stays one product per replayed step unless its inputs are
    smaller than the product; `batch_steps=True` makes it one product over
    all the steps (pdg-contract-reductions' over-steps), which measured
    slower or no faster at every size (bench/RESULTS.md)."""
    vectorize = f"pdg-vectorize{{dim={vectorize_dim}}}," if vectorize_dim else ""
    contract = "pdg-contract-reductions" + ("" if batch_steps else "{over-steps=false}")
    return (
        f"builtin.module(pdg-dedup,pdg-dce,canonicalize,{contract},"
        f"{vectorize}canonicalize,pdg-fuse,pdg-schedule,pdg-plan-storage)"
    )


OUTLINE = "pdg-outline-bodies"

# Bufferization of the wrapped bodies. Function arguments take any strided
# layout, so the driver can pass views of its stores without copying.
BUFFERIZE = (
    # tanh as exp (which libmvec vectorizes; scalar tanhf calls do not).
    "inline,symbol-dce,func.func(convert-elementwise-to-linalg,math-expand-ops{ops=tanh}),"
    "pdg-decompose-aggregates,"
    # Elementwise chains (an optimizer's update) as one loop nest, no temporaries.
    "pdg-fuse-elementwise,"
    "pdg-interchange-reductions,pdg-reassociate-reductions,cse,"
    "canonicalize,eliminate-empty-tensors,"
    "empty-tensor-to-alloc-tensor,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=fully-dynamic-layout-map}"
)

# After the destination result is dropped (bodies._drop_destination_results):
# temporaries of a fixed size up to 4 KiB live on the stack (a body's
# vectors and small matrices: no malloc and free per point), and every
# other temporary is freed at its last use.
DEALLOCATE = (
    "func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=4096 "
    "max-rank-of-allocated-memref=0}),buffer-deallocation-pipeline,cse,canonicalize"
)

# Each body as a GPU kernel (gpu.py), then PTX for each architecture.
TO_KERNELS = (
    "pdg-copies-to-linalg,"
    "func.func(convert-linalg-to-parallel-loops,gpu-map-parallel-loops,"
    "convert-parallel-loops-to-gpu),"
    "pdg-widen-i1-memrefs,gpu-kernel-outlining"
)


def to_ptx(chip: str, features: str) -> str:
    return (
        f"lower-affine,nvvm-attach-target{{chip={chip} features={features}}},"
        "gpu.module(convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-gpu-to-nvvm,"
        "reconcile-unrealized-casts),gpu-module-to-binary{format=isa}"
    )


def to_loops(
    check_indices: bool = True,
    call_blas: tuple[int, int] | None = None,
    blas_tiles: int = 0,
    split_in_loop: int = 65536,
    tiles_in_loop: int = 64,
    approximate: tuple[str, ...] = (),
    transpose_tile: int = 0,
) -> str:
    """index_add (take's gradient) becomes a scatter. Products get their
    tiles, large ones sgemm calls (with `call_blas`:
    the fewest multiply-adds and rows/columns of a call; see
    native.BLAS_MIN_FLOPS), cut into at most `blas_tiles` tiles (0: as
    any other op), and the rest register micro-kernels, then linalg
    becomes loops. Gathers are plain loads from here, and those at indices
    from data get a bounds check (whose sites native.index_checks reads
    back before TO_LLVM). `split_in_loop`: the fewest points of an op in a
    body the driver calls in its parallel loops that is split into tiles
    (see native.SPLIT_IN_LOOP_MIN_WORK; -1: none), into at most
    `tiles_in_loop` tiles. `approximate`: math ops (exp, log, ...) that
    become inline polynomials instead of libm calls. `transpose_tile`:
    the block a transpose that moves the contiguous dim is copied in (0:
    none). `check_indices=False`
    only to measure what the checks cost."""
    blas = blas_split = ""
    if call_blas is not None:
        min_flops, min_dim = call_blas
        blas = f"pdg-call-blas{{min-flops={min_flops} min-dim={min_dim}}},"
        blas_split = (
            f" blas-tiles={blas_tiles} blas-min-flops={min_flops} blas-min-dim={min_dim}"
        )
    return (
        # take's gradient as a scatter before anything tiles it as a dense op.
        "pdg-scatter-index-adds,pdg-copies-to-linalg,"
        "pdg-parallelize-large-ops{"
        f"min-work-in-loop={split_in_loop} tiles-in-loop={tiles_in_loop}{blas_split}}},"
        f"{blas}pdg-register-tile-contractions,"
        + (f"pdg-tile-transposes{{tile={transpose_tile}}}," if transpose_tile > 0 else "")
        + "func.func(convert-linalg-to-loops)"
        + (f",pdg-approximate-math{{ops={','.join(approximate)}}}" if approximate else "")
        + (",pdg-check-indices" if check_indices else "")
    )


TO_LLVM = (
    "lower-affine,"
    # The driver's parallel loops: OpenMP ops, outlined by mlir-translate into
    # calls of the runtime's thread pool (runtime/lib/threads.c).
    # pdg-inline-alloca-scopes drops the alloca scopes it wraps loop bodies in
    # (they allocate nothing), which would otherwise hold several blocks after
    # convert-scf-to-cf.
    # Each of the driver's loops in a function of its own first: mlir-translate
    # scans the whole function around a region it outlines.
    "pdg-outline-driver-loops,"
    "convert-scf-to-openmp,pdg-conditional-forks,pdg-inline-alloca-scopes,"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,pdg-widen-i1-memrefs,"
    "convert-vector-to-llvm,"
    "finalize-memref-to-llvm{use-generic-functions use-aligned-alloc},convert-math-to-llvm,"
    # What LLVM has no intrinsic for (math.erf) becomes a call into libm.
    "convert-math-to-libm,"
    "convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "convert-openmp-to-llvm,reconcile-unrealized-casts"
)


def run_registered(module: ir.Module, pipeline: str) -> None:
    """Runs `pipeline` (passes known to MLIR's registry only: upstream's
    and pdg's C++ passes) on `module`."""
    pm = PassManager("builtin.module", context=module.context)
    _ext.add_pass_pipeline(pm, pipeline)
    pm.run(module.operation)
