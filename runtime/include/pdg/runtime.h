/* pdg's C runtime: the ABI between a compiled program (program.so), the
   code the compiler generates for it, and the Python loader.

   Every program.so links this library statically (built once with pdg).
   The compiled entry `_mlir_ciface_pdg_<graph>` allocates through the
   counting allocator, runs its parallel loops on the thread pool, polls
   `pdg_abort` at every step, and calls back into the host through the
   per-program udf trampolines the compiler generates. The Python loader
   (pdg/runtime/) reads and writes the globals declared here by name. */
#ifndef PDG_RUNTIME_H
#define PDG_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever anything below changes meaning; a library reports the
   version it was linked with (pdg_runtime_version) and the loader refuses
   another one. */
#define PDG_RUNTIME_VERSION 2

#define PDG_EXPORT __attribute__((visibility("default")))

/* ---- Run state (run.c) ---------------------------------------------------
   A run stops early when `pdg_abort` becomes nonzero: every loop step of the
   entry checks it first, so the run ends within one step and frees what it
   allocated. The value is the reason; the first reason set wins. */
enum {
  PDG_RUNNING = 0,
  PDG_STOP_UDF = 1,       /* a host callback failed (the loader kept why) */
  PDG_STOP_INTERRUPT = 2, /* SIGINT while pdg_catch_interrupts was on */
  PDG_STOP_MEMORY = 3,    /* an allocation failed or passed the limit */
  PDG_STOP_INDEX = 4,     /* a data-dependent index was out of range */
  PDG_STOP_COLLECTIVE = 5, /* a collective failed (mpi.c) */
  PDG_STOP_ENDED = 6,      /* a read of a step after its sequence ended */
};

/* The most coordinates of a point a fault records. */
#define PDG_FAULT_COORDS 8

/* What stopped the run, for the loader's message. `site`: for an index
   fault the check's number (the manifest's `index_checks`); for a memory
   fault the growable store's number in the manifest's `abi.grow_stores`,
   -1 for the stores allocated before the run, -2 for a node body's
   temporaries that took the run past its limit. */
typedef struct {
  int64_t site;
  int64_t value;   /* the index read, or the bytes asked for */
  int64_t bound;   /* the extent it had to be below, or the limit (0: none) */
  int64_t ncoords; /* of the point computing when it happened */
  int64_t coords[PDG_FAULT_COORDS];
} pdg_fault_t;

PDG_EXPORT extern int8_t pdg_abort;
PDG_EXPORT extern pdg_fault_t pdg_fault;
/* The step the entry's current loop is at (a progress display polls it). */
PDG_EXPORT extern int64_t pdg_step;
/* 0 while the entry allocates its stores, 1 once its loops run (set by the
   entry). An allocation that fails before the run is survivable (the run
   is skipped); one inside a node body is not. */
PDG_EXPORT extern int8_t pdg_running;
PDG_EXPORT extern const int32_t pdg_runtime_version;

/* Sets the stop reason unless one is set; async-signal-safe. */
PDG_EXPORT void pdg_stop(int8_t reason);
/* Before a run: no stop reason, no fault, the memory limit (bytes; 0:
   none), and the bytes live to start from (the caller's inputs, which the
   run holds too). */
PDG_EXPORT void pdg_begin_run(int64_t memory_limit, int64_t bytes_live);
/* A data-dependent index outside [0, bound): records the first such fault
   (check `site`, the point's `n` coordinates) and stops the run. The
   caller reads a clamped index instead, so nothing is read out of range. */
PDG_EXPORT void pdg_index_fault(int64_t site, int64_t value, int64_t bound, int64_t n,
                                int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4,
                                int64_t c5, int64_t c6, int64_t c7);

/* A node read step `step` of a sequence that ended after `length` steps
   (the sequence's `n` group coordinates follow): records the first such
   fault at read `site` (the manifest's abi.ended_reads) and stops the run.
   The interpreter refuses the same read; the compiled code would read
   what the sequence's slot held last. */
PDG_EXPORT void pdg_ended_fault(int64_t site, int64_t step, int64_t length, int64_t n,
                                int64_t c0, int64_t c1, int64_t c2, int64_t c3, int64_t c4,
                                int64_t c5, int64_t c6, int64_t c7);

/* SIGINT during a run: pdg_catch_interrupts installs a handler that stops
   the run (PDG_STOP_INTERRUPT) and pdg_release_interrupts restores the
   previous one. Returns 0 on success. */
PDG_EXPORT int pdg_catch_interrupts(void);
PDG_EXPORT void pdg_release_interrupts(void);

/* ---- Allocation (alloc.c) ------------------------------------------------
   MLIR's generic allocation functions (finalize-memref-to-llvm with
   use-generic-functions), counting the bytes live and the peak. Blocks
   carry a 16-byte header; release them with _mlir_memref_to_llvm_free. */
PDG_EXPORT extern int64_t pdg_bytes_live;
PDG_EXPORT extern int64_t pdg_bytes_peak;
/* Bytes of freed blocks kept for reuse (not live): with the live bytes,
   never more than the highest peak of the process's runs. */
PDG_EXPORT extern int64_t pdg_bytes_kept;
/* The run may not take more than this (bytes; 0: no limit): stores before
   the run and growth are refused past it; a temporary past it is made, and
   the run stops after the current step. */
PDG_EXPORT extern int64_t pdg_memory_limit;
PDG_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
PDG_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
PDG_EXPORT void _mlir_memref_to_llvm_free(void *ptr);
/* Frees a result the entry returned, after its run: as
   _mlir_memref_to_llvm_free, but a later run's byte counts are not
   changed (each run counts from zero). */
PDG_EXPORT void pdg_free_result(void *ptr);
/* Returns the blocks kept for reuse to malloc. */
PDG_EXPORT void pdg_release_cache(void);

/* ---- Growth (grow.c) -----------------------------------------------------
   A growable store of rank `rank` grows along `dim` to `cap` steps
   (elements of `elem` bytes). `old` and `out` are memref descriptors
   {allocated, aligned, offset, sizes[rank], strides[rank]}. On failure (no
   memory, past the limit, a size that overflows) `out` is `old`, the run
   stops with PDG_STOP_MEMORY and `store` is the fault's site. */
PDG_EXPORT void pdg_grow(int64_t *out, const int64_t *old, int64_t rank, int64_t dim,
                         int64_t cap, int64_t elem, int64_t store);
/* The steps a growable store starts a call with: `cap`, or the most steps
   the same store reached in the program's earlier calls (*reached, kept
   per store by the generated code) where that many steps of `step_bytes`
   each fit under the memory limit now. */
PDG_EXPORT int64_t pdg_grow_start(const int64_t *reached, int64_t cap, int64_t step_bytes);
/* Notes that a store now holds `cap` steps (for pdg_grow_start). */
PDG_EXPORT void pdg_grow_reached(int64_t *reached, int64_t cap);
/* Stores grown so far (each moves the whole store). */
PDG_EXPORT extern int64_t pdg_grows;

/* ---- Threads (threads.c) -------------------------------------------------
   The pool behind the OpenMP ABI calls that convert-scf-to-openmp and the
   OpenMP translation emit for parallel loops (__kmpc_fork_call and its
   kin, defined hidden in the library). PDG_NUM_THREADS sets the team size
   (the loader validates it); the default is the CPUs this process may run
   on. */
#define PDG_MAX_THREADS 64
/* Threads a parallel loop may run on (starts the pool). */
PDG_EXPORT int64_t pdg_thread_slots(void);
/* This thread's number in its loop's team (0: the caller). */
PDG_EXPORT int64_t pdg_thread_index(void);
/* The driver's parallel loops over the points of a node (the calls
   pdg-conditional-forks emits around them). A body the driver calls inside
   such a loop runs its large ops as tiles the threads share only where the
   loop has fewer than PDG_WHOLE_OPS_FROM points (decode at batch 1): from
   there on the points share the threads and each body runs its ops whole.
   Which form runs is a function of the points alone, never of the threads,
   so every thread count runs the same code on the same data. */
#define PDG_WHOLE_OPS_FROM 2
/* Notes `points` (-1: not known) as the points of the loop the calling
   thread enters, for the bodies it calls; returns what it replaced. Each
   run starts with none noted (pdg_begin_run), even after a run that
   stopped inside a loop. */
PDG_EXPORT int64_t pdg_loop_enter(int64_t points);
/* Restores what pdg_loop_enter replaced, when the loop is done. */
PDG_EXPORT void pdg_loop_leave(int64_t previous);
/* The fewest points from which a driver's loop forks: every thread gets a
   point, or the bodies run their ops whole (min(slots, PDG_WHOLE_OPS_FROM)). */
PDG_EXPORT int64_t pdg_fork_from(void);
/* 1 if the bodies of the loop around the caller run their large ops as
   tiles (it has fewer than PDG_WHOLE_OPS_FROM points, or is not known). */
PDG_EXPORT int32_t pdg_ops_split(void);

/* ---- Matrix products (blas.c) -------------------------------------------
   C[m, n] += sum_k A[m, k] B[k, n] on f32 buffers, each given by its base
   pointer, offset and element strides along its two dims, through a BLAS's
   sgemm (the calls pdg-call-blas emits); with `overwrite`, C = the product
   instead, C's old values never read (the caller's fill of zeros before
   the product, dropped). Returns 1 if it made the product, 0 if it
   declined: no library (see below), sizes past an int, an operand with
   neither dim contiguous, or nothing to sum (k = 0) with `overwrite`; the
   caller then runs its own loops (and fill), C untouched.
   The library is the one a program names in `const char
   pdg_blas_library[]` (its path; generated C defines it where the program
   calls pdg_blas_sgemm), opened at the first call and run on one thread. */
PDG_EXPORT int32_t pdg_blas_sgemm(int64_t m, int64_t n, int64_t k, const float *a,
                                  int64_t a_offset, int64_t a_m, int64_t a_k, const float *b,
                                  int64_t b_offset, int64_t b_k, int64_t b_n, float *c,
                                  int64_t c_offset, int64_t c_m, int64_t c_n,
                                  int32_t overwrite);
/* Whether the library opened (opens it on the first call). */
PDG_EXPORT int32_t pdg_blas_available(void);
/* The products pdg_blas_sgemm added since the library was loaded. */
PDG_EXPORT extern int64_t pdg_blas_calls;

/* ---- Collectives (mpi.c) -------------------------------------------------
   A run bound to an MPI communicator (pdg_mpi_bind) is one rank of an SPMD
   program: every rank runs the same program and makes the same collective
   calls in the same order. `library` is the path of the libmpi mpi4py
   loaded; `comm`, `types` (indexed by PDG_ELEMENT_*) and `ops` (sum, max)
   are that library's handles as mpi4py gives them (MPI._handleof). Returns
   0, or 1 if the library does not open, 2 if it lacks one of
   MPI_Allreduce, MPI_Bcast, MPI_Allgather, MPI_Reduce_scatter_block and
   MPI_Sendrecv, 3 if rank/size are not a rank of a world. Unbound (the
   default, and after pdg_mpi_unbind) a program is a world of one rank. */
enum { PDG_ELEMENT_F32 = 0, PDG_ELEMENT_F64 = 1, PDG_ELEMENT_I32 = 2, PDG_ELEMENT_I64 = 3 };
#define PDG_ELEMENT_KINDS 4
/* An all-gather's result point has one more (leading) dim than its input's,
   of the world's size; a reduce-scatter's input point has one more than its
   result's (W blocks). A shift passes its distance as the root. */
enum {
  PDG_ALL_REDUCE_SUM = 0,
  PDG_ALL_REDUCE_MAX = 1,
  PDG_BROADCAST = 2,
  PDG_ALL_GATHER = 3,
  PDG_REDUCE_SCATTER_SUM = 4,
  PDG_REDUCE_SCATTER_MAX = 5,
  PDG_SHIFT = 6
};
/* The most dims of a point a collective takes (_mlir_ciface_pdg_collective_0..8,
   for an all-gather _mlir_ciface_pdg_collective_gather_1..8 and for a reduce-scatter
   _mlir_ciface_pdg_collective_scatter_0..7, numbered by the result's dims). */
#define PDG_COLLECTIVE_MAX_RANK 8
PDG_EXPORT int32_t pdg_mpi_bind(const char *library, intptr_t comm, int64_t rank, int64_t size,
                                const intptr_t *types, const intptr_t *ops);
PDG_EXPORT void pdg_mpi_unbind(void);
PDG_EXPORT int64_t pdg_world_rank(void);
PDG_EXPORT int64_t pdg_world_size(void);
/* The collective calls made since the library was loaded. A failed call
   stops the run with PDG_STOP_COLLECTIVE and pdg_fault {site: the call
   site's number (the manifest's abi.collectives), value: MPI's error code
   and bound -1; or value: a broadcast's root and bound: the world's size;
   or value: an all-gather's result rows or a reduce-scatter's input
   blocks and bound: the world's size;
   or value: the element count and bound: INT_MAX}. */
PDG_EXPORT extern int64_t pdg_collective_calls;

/* ---- Host callbacks ------------------------------------------------------
   Slot k of the program's `pdg_udf_table` (generated, one slot per udf
   call site) holds the loader's callback; it returns nonzero on failure. */
typedef int (*pdg_udf_fn)(int64_t slot, void **descriptors, const int64_t *coords);

#ifdef __cplusplus
}
#endif

#endif /* PDG_RUNTIME_H */
