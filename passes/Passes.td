//===- Passes.td - pdg passes written in C++ ------------------------------===//

#ifndef PDG_PASSES_TD
#define PDG_PASSES_TD

include "mlir/Pass/PassBase.td"

def PdgDeadNodeElimination : Pass<"pdg-dce", "::mlir::pdg::GraphOp"> {
  let summary = "Remove nodes that no output, host callback or bound needs";
  let description = [{
    Keeps what the program's results depend on: outputs, UDF nodes (host
    callbacks may have effects), program inputs (the signature) and the
    `until` conditions of dynamic dims, and everything they read, through
    any access. Everything else is erased, dead cycles included. Unlike
    `canonicalize` (which also erases unused pure nodes), it changes nothing
    else: no access simplification, no input pruning. Use it after passes
    that make values unused (dedup, incrementalize).
  }];
  let statistics = [
    Statistic<"numErased", "erased-nodes", "Number of nodes erased">
  ];
}

def PdgDeduplicate : Pass<"pdg-dedup", "::mlir::pdg::GraphOp"> {
  let summary = "Merge nodes that compute the same thing from the same inputs";
  let description = [{
    Two nodes are the same when they have the same domain and point type,
    the same cases (conditions), the same inputs read through the same
    accesses, and bodies that are equivalent op by op (locations and names
    aside). UDF calls are never merged: a host callback may have effects. The later one is replaced by the earlier,
    repeatedly, so that whole duplicated sub-models (e.g. two heads over a
    shared trunk written twice) collapse. Recurrences that read only
    themselves are compared by their inputs and are merged only when those
    are the same values.
  }];
  let statistics = [
    Statistic<"numMerged", "merged-nodes", "Number of nodes merged into another">
  ];
}

def PdgFuseProducers : Pass<"pdg-fuse", "::mlir::pdg::GraphOp"> {
  let summary = "Compute a node inside its readers when they read it at their own point";
  let description = [{
    A node with one case (unconditional, or guarded exactly as the reading
    case), read only by one other node over
    the same dims at the reader's own point (`%p[b, t]`), is computed in
    the reader's body: its reads move to the reader unchanged and its body
    is cloned where the reader used it. Each point still computes it once;
    the store between the two, its loop nest and its call disappear. Chains
    of elementwise nodes (gradients, optimizer updates, normalizations)
    become one node. A producer with several such readers is computed in
    each of them when its body only spreads small reads over a value at
    least 4x their size, element by element, with no reduction (a one-hot
    of sampled tokens over the vocabulary, read by a step and by its
    gradient): computing it again costs less than its store. Outputs,
    `until` values, udfs and producers with symbols their reader does not
    bind are left alone. A producer that reduces what it reads to a value at
    least 4x smaller (a sum of squares) is not fused into a reader that
    would then read more than `max-reads` values: such a store costs little,
    and one body holding a loop nest per weight (a global gradient norm)
    costs LLVM more time than the bodies apart. Repeated to a fixpoint.
  }];
  let options = [
    Option<"maxReads", "max-reads", "unsigned", /*default=*/"40",
           "The most values a node reads after a reducing producer is fused into it">
  ];
  let statistics = [
    Statistic<"numFused", "fused-nodes", "Number of nodes computed inside their reader">
  ];
}

def PdgContractReductions : Pass<"pdg-contract-reductions", "::mlir::pdg::GraphOp"> {
  let summary = "Sum a per-point product over the points as one contraction";
  let description = [{
    A node that only sums another node over some of its dims (a weight's
    gradient: the sum over b and t of per-point outer products) reads the
    product's inputs over those dims instead, and its body becomes the
    product's body with the summed dims as extra reduction loops: one
    matrix product instead of a stored B * T * n * m tensor. Applies when
    the product's body accumulates into a zero-filled output, it reads its
    inputs at its own coordinates, the sum is its only reader, and its
    inputs hold fewer numbers per point than it does, or (with
    `over-steps`, the default) when a summed dim is dynamic: the steps of a
    recurrence (a weight's gradient over the decode steps t, whose
    per-step products would otherwise run in the replayed loop as T small
    products and be added up after it) then become one taller product after
    the loop, over inputs stored along the steps.
  }];
  let options = [
    Option<"overSteps", "over-steps", "bool", /*default=*/"true",
           "Contract a sum over a dynamic dim whatever its inputs hold per point">
  ];
  let statistics = [
    Statistic<"numContracted", "contracted", "Sums rewritten as contractions">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def PdgIncrementalize : Pass<"pdg-incrementalize", "::mlir::pdg::GraphOp"> {
  let summary = "Turn reductions over a finished sequence into running ones";
  let description = [{
    A node that reads a whole sequence, `%x[b, 0 : T]`, after the sequence
    dim has ended, and reduces it along that dim (a linalg.generic whose
    combiner is an associative add, mul, max or min starting from its
    identity), becomes an accumulator over the sequence dim that runs per
    step alongside whatever produces `x` (e.g. generation), and a read of the
    accumulator's last step `acc[b, T - 1]`. Typical use: a reference
    model's summed log-probs, computed while the sequence is generated
    instead of in a second pass. Storage planning then keeps two steps of
    the accumulator instead of the whole sequence.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numIncrementalized", "incrementalized-nodes",
              "Number of whole-sequence reductions made per-step">
  ];
}

def PdgOutlineBodies : Pass<"pdg-outline-bodies", "::mlir::ModuleOp"> {
  let summary = "Outline every node case body into a func.func (first lowering step)";
  let description = [{
    Each case of each `pdg.node` becomes `func.func @<graph>_<node>_<case>`
    next to the graph: its arguments are the case's inputs as read (block
    argument types) followed by one `index` per domain dim (what
    `pdg.point` reads), its result the node's value at one point. The node
    keeps its body and records the functions in `pdg.bodies`. Upstream
    bufferization and lowering then compile the bodies as ordinary
    functions; the loop nest that calls them comes from the schedule.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numOutlined", "outlined-bodies", "Number of bodies outlined">
  ];
}

def PdgRegisterTileContractions
    : Pass<"pdg-register-tile-contractions", "::mlir::ModuleOp"> {
  let summary = "Keep the output tile of a contraction in vector registers";
  let description = [{
    For each f32 linalg.generic on buffers that computes
    C[.., m, n] += A[.., m, .., k..] * B[.., k.., n] (n the last dim of C and
    B and absent from A; m the second-last dim of C, read by A only; one or
    more summed loops k), emits a micro-kernel over the full tiles of
    4 rows x 16 columns (8 vectors of one row when C has no m): the tile of
    C is loaded into SSA vectors, carried through the summed loops (one
    broadcast of A and one vector.fma per vector of B each step) and stored
    once. The rows and columns left over run the original op on subviews,
    as does everything when B's or C's last stride is not 1 at run time.

    A matrix-vector product whose B holds at least `stream-min-bytes`
    (or whose size is not static) streams B instead: the last summed loop
    takes 4 rows of B per step and, for each vector of columns, loads C,
    adds the 4 rows' products in order and stores it back, so each row of B
    is read end to end (streams the prefetchers follow) rather than down a
    strip of columns. Each element adds the same products in the same order
    as the register tile, so the columns both cover get the same bits. A
    product with rows streams B the same way where its tiled rows are at
    most 8 at run time (a small batch: decode at batch 8 vectorized), in
    blocks of 512 columns, each row in turn over the same block of B's 4
    rows, which the later rows read from the L1 cache; with more rows it
    runs the tiles.

    A contraction in dot form, C[.., m, n] += A[.., m, k] * B[.., n, k] with
    its one summed loop last in both inputs (logits against a tied
    embedding table, h @ E^T, read from E as it is stored), runs tiles of
    4 x 2 outputs (1 x 4 without m), each a vector accumulator filled 8
    products at a time from rows of A and B read end to end, then summed
    across its lanes. It needs A's and B's last strides to be 1 at run time
    (else the op as it was). Its sums are in another order than the op's.
    Where A's tiled rows take at most 1 MiB, the tiles of rows run inside
    the tiles of B's rows, so that B (a table) is read once.
  }];
  let options = [
    Option<"streamMinBytes", "stream-min-bytes", "int64_t", /*default=*/"262144",
           "bytes of B from which a matrix-vector product streams B's rows">
  ];
  let statistics = [
    Statistic<"numTiled", "tiled", "contractions given a register micro-kernel">,
    Statistic<"numDots", "dots", "contractions in dot form given a micro-kernel">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

def PdgCallBlas : Pass<"pdg-call-blas", "::mlir::ModuleOp"> {
  let summary = "Call a tuned sgemm for large f32 contractions on buffers";
  let description = [{
    A linalg.generic on f32 memrefs that computes
    C[.., m.., n..] += A[.., m.., k..] * B[.., k.., n..] (a multiply-add
    body; every summed loop read by both factors, every other loop by C)
    becomes, where m * n * k is at least `min-flops` and both m and n at
    least `min-dim` at run time (sgemm copies both factors into blocks: a
    matrix-vector product pays that copy for little arithmetic, and runs
    faster in pdg-register-tile-contractions; pdg.lowering.native passes
    the values bench/products.py measured), a call of
    `pdg_blas_sgemm` per point of the batch loops (those read by A, B and
    C). The loops of each group (m, n, k) must be consecutive in memory in
    every operand that reads them (checked at run time) and are passed as
    one matrix dim; the helper (pdg's C runtime, runtime/lib/blas.c) passes
    the matrices to the BLAS (oneMKL or OpenBLAS, as `$PDG_BLAS` chose
    when the program compiled) with the transposition flags their strides
    call for, and declines (returns 0) when no dim of one is contiguous or
    the library is missing at run time. A product too small, or declined,
    runs the op as it was; one whose static sizes are too small is left
    alone. A `linalg.fill` of +0.0 into exactly the op's output right before
    it (how a product's output starts) runs only on that path: the call
    passes `overwrite` = 1 and sgemm writes C with beta = 0, never reading
    it, so C is written once instead of zeroed and read back.
  }];
  let options = [
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"131072",
           "multiply-adds (m * n * k) from which a product calls sgemm">,
    Option<"minDim", "min-dim", "int64_t", /*default=*/"2",
           "the fewest rows (m) and columns (n) of a product that calls sgemm">
  ];
  let statistics = [
    Statistic<"numCalls", "calls", "contractions that may call sgemm">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def PdgParallelizeLargeOps : Pass<"pdg-parallelize-large-ops", "::mlir::ModuleOp"> {
  let summary = "Split large linalg ops on buffers into tiles the thread pool shares";
  let description = [{
    A node computed once (a weight's gradient summed over every point, a
    batched matrix product) is one body call: the driver's parallel loops
    cannot share it out. This pass tiles each linalg op on memrefs whose
    iteration space holds at least `min-work` points (a dynamic extent
    counts as 64) along a parallel loop, as an scf.parallel: the first that
    indexes the op's largest input (its elements, a dynamic dim counted as
    64), else the first. A product of a few rows (a batch of tokens) by a
    large weight matrix is so cut along the weights' columns, and each
    thread reads its own part of the weights instead of all of them;
    convert-scf-to-openmp and the pool run the tiles. The tile size is a
    function of the loop's extent alone, never of the thread count:
    ceil(extent / 64) rounded up to a multiple of 64 along the output's last
    dim and of 4 along another (the register tiles of
    pdg-register-tile-contractions), so at most 64 tiles. Which elements
    share a tile (and so which run a vectorized loop's remainder or a
    register tile's edge) is then the same on every thread count, and so
    are the results. Ops already inside an scf.parallel stay whole, as do
    ops on tensors, ops without a parallel loop and ops whose static extent
    fits one tile. In a function marked `pdg.in_parallel_loop` (a body the
    driver calls inside its parallel loops) an op is split from
    `min-work-in-loop` points, and the split is a choice made at run time:
    `scf.if (pdg_ops_split() != 0)` runs the tiles, else a copy of the op
    whole. The runtime says to split where the driver's loop has too few
    points to share out the threads (one, at decode at batch 1: the loop
    then runs on the caller, see pdg-conditional-forks, and these tiles
    share out the threads instead); with more, each thread runs whole
    bodies at its points. The answer depends on the loop's points alone,
    never on the threads, so every thread count runs the same code. A
    product of a few rows whose weights B[k, n] are read along their rows
    (n, the output's last
    dim, is B's last; decode at batch 1, or a small batch vectorized) is
    cut along the summed loop k instead, into at most 8 tiles of whole rows
    of B (one block of memory each, where tiles of columns read every row
    in short runs): each tile sums into a partial output of its own
    (allocated and zeroed before the loop), and the partials are then
    added to the output in tile order. Only where those partials hold at
    most 1/8 of B's elements; where the rows are known only at run time,
    that is checked there, and the op is cut along n otherwise. With
    `blas-tiles` > 0, an f32 product whose tiles pdg-call-blas (given the
    same `blas-min-flops` and `blas-min-dim`) will turn into sgemm calls,
    their rows and columns known here (a summed extent known only at run
    time counts as 64), is cut into at most `blas-tiles` tiles
    (along the loop chosen as for any op, never the summed one), in and
    outside the driver's loop:
    each tile is one call, and sgemm runs a few wide calls faster than
    many narrow ones, each of which reads all of A again. A `linalg.fill`
    of the op's output right before it (a product's zeros, a maximum's
    -inf) goes with the op: cut along a loop that indexes the output, each
    tile fills its own part just before computing it (in parallel, and in
    the caches when the tile reads it; pdg-call-blas then drops a fill of
    zeros), and the op's whole copy in a body of the driver's loop keeps
    its fill before it. Cut along the summed loop, or where the op reads
    its own output, the fill stays whole.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "iteration points below which an op stays on one thread">,
    Option<"minWorkInLoop", "min-work-in-loop", "int64_t", /*default=*/"65536",
           "the same in a body the driver calls in a parallel loop (-1: never split there)">,
    Option<"tilesInLoop", "tiles-in-loop", "int64_t", /*default=*/"64",
           "the most tiles an op in such a body is cut into">,
    Option<"blasTiles", "blas-tiles", "int64_t", /*default=*/"0",
           "the most tiles of a product that calls sgemm (0: as any other op)">,
    Option<"blasMinFlops", "blas-min-flops", "int64_t", /*default=*/"131072",
           "pdg-call-blas's min-flops, to tell which products call sgemm">,
    Option<"blasMinDim", "blas-min-dim", "int64_t", /*default=*/"2",
           "pdg-call-blas's min-dim, likewise">
  ];
  let statistics = [
    Statistic<"numSplit", "split", "linalg ops split into tiles">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect",
                           "::mlir::func::FuncDialect"];
}

def PdgConditionalForks : Pass<"pdg-conditional-forks", "::mlir::ModuleOp"> {
  let summary = "Fork a loop holding parallel loops only where its points share the threads";
  let description = [{
    Runs after convert-scf-to-openmp. A parallel region can use the pool
    only where no region around it holds it, so when the driver's loop over
    the sequences forks, the bodies it calls cannot fork their split
    products, and at batch 1 one thread would do all the work. For each
    omp.parallel whose region reaches another omp.parallel (nested, or in a
    function it calls, transitively), this pass counts its loop's points
    from the bounds of its omp.loop_nest, notes them for the bodies inside
    (`pdg_loop_enter(points)` before the region, `pdg_loop_leave` after:
    the bodies' `pdg_ops_split()` reads them, see
    pdg-parallelize-large-ops) and gives the region the clause
    `if(points >= pdg_fork_from())`: the loop forks where each thread gets
    a point or the bodies run their ops whole. Below that the runtime runs
    the region on the caller alone (`__kmpc_fork_call_if`) and the inner
    regions fork. A region without one loop nest at its top, or whose
    bounds are computed inside it, keeps no clause and notes its points as
    not known (-1: its bodies split); regions with an if clause already are
    left as they are.
  }];
  let statistics = [
    Statistic<"numConditional", "conditional", "parallel regions given an if clause">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::omp::OpenMPDialect"];
}

def PdgInlineAllocaScopes : Pass<"pdg-inline-alloca-scopes"> {
  let summary = "Inline memref.alloca_scope ops whose own region allocates nothing";
  let description = [{
    convert-scf-to-openmp wraps each parallel loop body in a
    memref.alloca_scope, and convert-scf-to-cf then leaves several blocks
    in it, which its verifier refuses (MLIR 22.1.8). Upstream's
    canonicalization keeps any scope that holds a call (a call may
    allocate), but a callee's stack allocations live in its own frame. This
    pass moves the ops of every scope whose region holds no memref.alloca
    (outside nested functions) into the parent block, so the driver's
    parallel loops, which only compute views and call bodies, lower.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PdgWidenI1Memrefs : Pass<"pdg-widen-i1-memrefs", "::mlir::ModuleOp"> {
  let summary = "Store booleans as i8 in memory (workaround for i1 memrefs)";
  let description = [{
    MLIR 22.1.8's finalize-memref-to-llvm aborts on stores to i1 memrefs.
    After bufferization, this pass gives every memref of i1 an i8 element
    type (function signatures, allocations, views, globals), extends stored
    i1 values with arith.extui and truncates loaded ones with arith.trunci,
    so booleans stay i1 in registers and take a byte in memory. Run it after
    one-shot-bufferize and convert-linalg-to-loops, before
    finalize-memref-to-llvm. The workaround lives here and nowhere else.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def PdgTileTransposes : Pass<"pdg-tile-transposes", "::mlir::ModuleOp"> {
  let summary = "Copy a transpose that moves the contiguous dim in square blocks";
  let description = [{
    Each linalg.transpose on buffers whose permutation moves the input's
    last (contiguous) dim is tiled, with scf.for loops over subviews, along
    its two loops that swap: the output's last dim and the one that reads
    the input's last, `tile` elements each (the other dims are not tiled).
    Untiled, the loop nest writes down the output's columns, a cache line
    per element; a block of `tile` x `tile` keeps the lines it reads and
    writes in L1 until they are used whole. A swapped dim of at most
    `tile` stays whole in each block (the thread's tiles of
    pdg-parallelize-large-ops are often a few rows wide); a transpose that
    keeps the last dim last, or has at most `tile` along both, is left
    alone. Runs on buffers, before convert-linalg-to-loops.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"32",
           "elements per block along each of the two swapped dims">,
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "transposes tiled into blocks">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def PdgApproximateMath : Pass<"pdg-approximate-math"> {
  let summary = "Named math ops (log1p, exp, ...) as inline polynomials, not libm calls";
  let description = [{
    Rewrites the math ops named in `ops` (by mnemonic: log1p, exp, ...)
    with upstream's polynomial approximations: a range reduction, a
    polynomial and explicit fma, in arith and math.fma ops. LLVM lowers
    math.log1p as log(1 + x), which is 0 for x below 6e-8; the
    approximation keeps the small x. math.exp would otherwise be glibc's,
    picked by the loop's vector width and the machine (libmvec's variants,
    the scalar expf in remainders); inline, every element runs the same
    arithmetic on every x86-64 machine. An op upstream has no
    approximation for is refused. Runs on loops, before
    convert-math-to-llvm.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "math op mnemonics to approximate (log1p, exp, ...)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def PdgOutlineDriverLoops : Pass<"pdg-outline-driver-loops", "::mlir::ModuleOp"> {
  let summary = "Move each outermost loop of a driver into a function of its own";
  let description = [{
    In every function that is not a node's body (no `pdg.node` attribute),
    each outermost scf.parallel, and each outermost scf.for outside them
    that calls nothing, forks nothing and allocates nothing (an element
    loop), becomes a call of a new private function (`parallel_<k>_of_<driver>`
    or `loop_<k>_of_<driver>`, `noinline`) that takes what the loop reads
    from outside as arguments (constants are cloned in) and returns its
    results. LLVM's passes then see a driver of calls, whose size no loop
    multiplies: mlir-translate extracts each OpenMP region with a scan of
    the whole function around it, and opt's LoopVectorize (in LLVM built
    with assertions) verifies the whole function after each loop it
    vectorizes, so a driver of some thousand loops (a 12-layer training
    program) took time quadratic in its size. Runs before
    convert-scf-to-openmp. `element-loops=false` leaves the element loops
    in place (to measure what moving them gains).
  }];
  let options = [
    Option<"elementLoops", "element-loops", "bool", /*default=*/"true",
           "Also move the driver's element loops into functions">,
  ];
  let statistics = [
    Statistic<"numParallel", "parallel", "Parallel loops moved into functions">,
    Statistic<"numSerial", "serial", "Element loops moved into functions">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PdgCheckIndices : Pass<"pdg-check-indices", "::mlir::ModuleOp"> {
  let summary = "Bounds-check loads and stores at data-dependent indices (take, gathers)";
  let description = [{
    In the bodies of nodes (functions with a `pdg.node` attribute), every
    memref.load and memref.store whose index comes from data (an
    arith.index_cast of an integer: a token id, a label, a position) gets a
    check that the index lies in [0, extent). An index out of range calls
    `pdg_index_fault(site, index, extent, n, coordinates...)` of pdg's C
    runtime, which records the first fault and stops the run after the
    current step, and the access uses index 0 instead, so nothing outside
    the buffer is read or written. `site` numbers the checks in the module
    in walk order; `n` and the coordinates (at most 8) are the function's
    index arguments, the point the node computes. Run it after
    convert-linalg-to-loops, where gathers are plain loads.
  }];
  let statistics = [
    Statistic<"numChecked", "checked", "Index operands checked">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def PdgScatterIndexAdds : Pass<"pdg-scatter-index-adds", "::mlir::ModuleOp"> {
  let summary = "Run index_add (take's gradient) as a scatter, not a dense compare";
  let description = [{
    A linalg.generic on buffers that adds g into out where idx == the loop
    over one of out's dims (out[v, ...] += idx[n] == v ? g[n, ...] : 0, as
    the frontend writes index_add) becomes loops over every other dim that
    add each g element to the row its index names. The dense form costs
    (table rows x indices x row length) compares; the scatter costs one add
    per g element. Indices outside the table add nothing, as before, and
    each output element sums its terms in the same order. Run it after
    bufferization, before the passes that split or tile linalg ops.
  }];
  let statistics = [
    Statistic<"numScattered", "scattered", "index_add generics run as scatters">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def PdgCopiesToLinalg : Pass<"pdg-copies-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Rewrite memref.copy as linalg.copy (no C runner library at run time)";
  let description = [{
    finalize-memref-to-llvm lowers a memref.copy between non-contiguous
    views to a call to `memrefCopy`, which lives in MLIR's C runner
    library. Compiled pdg programs load without MLIR, so every memref.copy
    becomes a linalg.copy here, and convert-linalg-to-loops then emits the
    copy as loops. Run it after bufferization, before
    convert-linalg-to-loops.
  }];
  let statistics = [
    Statistic<"numRewritten", "rewritten", "Copies rewritten as linalg.copy">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PdgDecomposeAggregates : Pass<"pdg-decompose-aggregates", "::mlir::ModuleOp"> {
  let summary = "Decompose linalg.softmax and other aggregate ops into linalg.generic";
  let description = [{
    Ops with linalg's AggregatedOpInterface (linalg.softmax) have no loop
    lowering; upstream decomposes them only from the transform dialect.
    This pass calls the interface's decomposition on each of them, on
    tensors, before bufferization.
  }];
  let statistics = [
    Statistic<"numDecomposed", "decomposed", "Aggregate ops decomposed">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PdgFuseElementwise : Pass<"pdg-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse chains of elementwise linalg ops in a body into one loop nest";
  let description = [{
    On tensors, before bufferization: a linalg.generic whose loops are all
    parallel, used only by another such generic, is computed inside it
    (upstream's elementwise fusion, restricted). A chain of elementwise ops
    (an optimizer's update, an activation and its gradient) then runs as
    one loop nest with no temporary per intermediate. Contractions and
    reductions are not fused into (their kernels match them whole), and no
    producer is computed twice. Each element sees the same scalar ops in
    the same order.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PdgInterchangeReductions : Pass<"pdg-interchange-reductions", "::mlir::ModuleOp"> {
  let summary = "Run reductions outside the output's contiguous dim (vectorizable inner loops)";
  let description = [{
    For each linalg.generic with reductions whose output's last dimension
    is indexed by a parallel loop that is also the last index of every
    input reading it (a matrix-vector product x[k] * W[k, n] -> y[n]),
    reorders the iteration space as: other parallel loops, reductions,
    that loop. convert-linalg-to-loops then emits y[n] += x[k] * W[k, n]
    with n innermost: unit stride and no loop-carried scalar chain.
  }];
  let statistics = [
    Statistic<"numInterchanged", "interchanged", "linalg.generic ops reordered">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PdgReassociateReductions : Pass<"pdg-reassociate-reductions", "::mlir::ModuleOp"> {
  let summary = "Allow floating-point reductions to be reordered (vectorized dot products)";
  let description = [{
    Marks the floating-point arithmetic in the bodies of linalg.generic ops
    with reduction iterators `fastmath<reassoc,contract>`, so that LLVM
    can vectorize a reduction that stays innermost (attention scores, a
    dot product over the head dim) with several partial sums and fused
    multiply-adds. Sums change within rounding.
  }];
  let statistics = [
    Statistic<"numMarked", "marked", "Arithmetic ops marked reassoc,contract">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PdgSplitOverWorkers : Pass<"pdg-split-over-workers", "::mlir::pdg::GraphOp"> {
  let summary = "Split a launch dim's points over the ranks: data parallelism";
  let description = [{
    `dim=p` splits p over a new worker dim `worker` (`< world W`): one
    SPMD program in which each rank holds its own P points of every value
    over p (P becomes the rank's share). Every node that sums all of p
    (`%x[0 : P]` read by a zero fill and one adding linalg.generic: a
    weight's gradient, a loss's numerator) becomes the rank's partial sum
    over w, and a `pdg.all_reduce sum` over w is what its readers read.
    Nodes that read all of p only for its extent hold the rank's rows and
    become values over w, as does what they compute. Coordinates along p
    marked `{pdg.global}` (sampling keys) become `w * P + p`, so that the
    ranks draw what one process draws. Refused, each at the op: a dim that
    is not a launch dim, a graph with a worker dim already, a read of
    another point of p or of part of it, a read of all of p that is not a
    sum (a mean dividing by the extent: divide a sum by a sum of ones), a
    host callback reading all of p, case conditions on p, and outputs that
    would differ between ranks.
  }];
  let options = [
    Option<"dim", "dim", "std::string", /*default=*/"\"\"",
           "The launch dim whose points are split over the ranks">,
    Option<"worker", "worker", "std::string", /*default=*/"\"w\"",
           "The name of the worker dim the pass adds">,
    Option<"world", "world", "std::string", /*default=*/"\"W\"",
           "The worker dim's bound symbol: the number of ranks">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect"];
}

def PdgVectorize : Pass<"pdg-vectorize", "::mlir::pdg::GraphOp"> {
  let summary = "Fold a parallel dim into the point type: one step processes the whole batch";
  let description = [{
    A node over [b, t] with points tensor<P> becomes a node over [t] with
    points tensor<B x P>. Vectorized producers are read whole, inputs over
    b through the slice [0 : B]; bodies are batched op by op (a leading
    parallel loop in each linalg.generic, shifted dims in shape ops).
    Outputs and the `until` values of dynamic dims get unpack nodes over
    [b, ...] taking row b, so sequences still end on their own. Udfs over
    b, case conditions on b and unsupported body ops are reported at the
    op; the graph is then left unchanged.
  }];
  let options = [
    Option<"dim", "dim", "std::string", /*default=*/"\"b\"",
           "The parallel dim to fold (it must come first in every domain)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // PDG_PASSES_TD
