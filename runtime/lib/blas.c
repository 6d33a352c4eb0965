/* Large matrix products through a tuned sgemm: Intel oneMKL (its single
   dynamic library, libmkl_rt, from the `mkl` wheel) or OpenBLAS as the
   scipy-openblas32 wheel ships it (its symbols prefixed `scipy_`).

   pdg-call-blas turns a large f32 product of a program into calls of
   pdg_blas_sgemm. The program names the library it was compiled against
   (`pdg_blas_library`, a path written into its generated C); it is opened
   at the first call, not linked, so that a program.so loads whether or not
   the library is still there: where it is missing, or its symbols are,
   every call declines (returns 0) and the program runs the product with
   its own loops (the register micro-kernels).

   The BLAS runs on one thread, the calling one. pdg's pool shares out the
   tiles of a large product (pdg-parallelize-large-ops cuts them by their
   extents alone), each tile is one sgemm call, and so what is added to what
   does not depend on the number of threads; a product inside a parallel
   loop would otherwise start the BLAS's threads on top of the pool's. The
   setting is the library's, for the whole process: OpenBLAS's thread
   count, MKL's sequential threading layer (chosen before its first call;
   if MKL was loaded and threaded already, its thread count). */
#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>

enum { PDG_ROW_MAJOR = 101, PDG_NO_TRANS = 111, PDG_TRANS = 112 };

typedef void (*pdg_sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k,
                             float alpha, const float *a, int lda, const float *b, int ldb,
                             float beta, float *c, int ldc);
typedef void (*pdg_set_threads_fn)(int threads);
typedef int (*pdg_set_layer_fn)(int layer);

/* Defined by a program whose code calls pdg_blas_sgemm; absent (a null
   address) in one that does not. */
extern const char pdg_blas_library[] __attribute__((weak));

int64_t pdg_blas_calls;

static pthread_once_t pdg_blas_once = PTHREAD_ONCE_INIT;
static pdg_sgemm_fn pdg_sgemm;

enum { PDG_MKL_THREADING_SEQUENTIAL = 1 };

/* OpenBLAS from scipy-openblas32: its sgemm, run on one thread. */
static pdg_sgemm_fn pdg_blas_openblas(void *library) {
  pdg_sgemm_fn sgemm = (pdg_sgemm_fn)dlsym(library, "scipy_cblas_sgemm");
  pdg_set_threads_fn set_threads =
      (pdg_set_threads_fn)dlsym(library, "scipy_openblas_set_num_threads");
  if (!sgemm || !set_threads)
    return NULL;
  set_threads(1);
  return sgemm;
}

/* oneMKL's libmkl_rt: its sgemm, with the sequential layer (no OpenMP
   runtime loaded), or one thread where another user of the process chose
   a threaded layer first. */
static pdg_sgemm_fn pdg_blas_mkl(void *library) {
  pdg_sgemm_fn sgemm = (pdg_sgemm_fn)dlsym(library, "cblas_sgemm");
  pdg_set_layer_fn set_layer = (pdg_set_layer_fn)dlsym(library, "MKL_Set_Threading_Layer");
  pdg_set_threads_fn set_threads = (pdg_set_threads_fn)dlsym(library, "MKL_Set_Num_Threads");
  if (!sgemm || !set_layer || !set_threads)
    return NULL;
  if (set_layer(PDG_MKL_THREADING_SEQUENTIAL) != PDG_MKL_THREADING_SEQUENTIAL)
    set_threads(1);
  return sgemm;
}

static void pdg_blas_open(void) {
  if (!pdg_blas_library)
    return;
  void *library = dlopen(pdg_blas_library, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return;
  pdg_sgemm_fn sgemm = pdg_blas_openblas(library);
  if (!sgemm)
    sgemm = pdg_blas_mkl(library);
  /* Neither: not the library it was; left open, never called. */
  pdg_sgemm = sgemm;
}

int32_t pdg_blas_available(void) {
  pthread_once(&pdg_blas_once, pdg_blas_open);
  return pdg_sgemm != NULL;
}

/* How a row-major operand of `rows` x `cols` with these element strides is
   passed: its transposition flag and leading dim; 0 if neither dim is
   contiguous (or the leading dim is past an int). */
static int pdg_blas_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                           int *trans, int64_t *lead) {
  if (rows == 1 && col_stride == 1) { /* one row: its row stride is never followed */
    *trans = PDG_NO_TRANS, *lead = cols;
  } else if (cols == 1 && row_stride == 1) { /* one column, likewise */
    *trans = PDG_TRANS, *lead = rows;
  } else if (col_stride == 1 && row_stride >= cols) {
    *trans = PDG_NO_TRANS, *lead = row_stride;
  } else if (row_stride == 1 && col_stride >= rows) {
    *trans = PDG_TRANS, *lead = col_stride;
  } else if (rows == 1 && col_stride >= 1) { /* one row, strided: a column of its transpose */
    *trans = PDG_TRANS, *lead = col_stride;
  } else if (cols == 1 && row_stride >= 1) {
    *trans = PDG_NO_TRANS, *lead = row_stride;
  } else {
    return 0;
  }
  return *lead >= 1 && *lead <= INT_MAX;
}

int32_t pdg_blas_sgemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_offset,
                       int64_t a_m, int64_t a_k, const float *b, int64_t b_offset, int64_t b_k,
                       int64_t b_n, float *c, int64_t c_offset, int64_t c_m, int64_t c_n,
                       int32_t overwrite) {
  if (m <= 0 || n <= 0)
    return 1; /* no element of C */
  if (k <= 0)
    return !overwrite; /* nothing to add; C = 0 is left to the caller's fill */
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || !pdg_blas_available())
    return 0;
  a += a_offset, b += b_offset, c += c_offset;
  /* sgemm's beta: 0 writes C without reading it (the caller's fill of
     zeros, dropped), 1 adds to it. */
  float beta = overwrite ? 0.0f : 1.0f;
  int tc, ta, tb;
  int64_t ldc, lda, ldb;
  if (!pdg_blas_layout(m, n, c_m, c_n, &tc, &ldc))
    return 0;
  if (tc == PDG_TRANS) {
    /* C is stored by columns: C^T[n, m] += B^T[n, k] A^T[k, m], whose
       operands are B and A read the other way. */
    if (!pdg_blas_layout(n, k, b_n, b_k, &tb, &ldb) || !pdg_blas_layout(k, m, a_k, a_m, &ta, &lda))
      return 0;
    pdg_sgemm(PDG_ROW_MAJOR, tb, ta, (int)n, (int)m, (int)k, 1.0f, b, (int)ldb, a, (int)lda,
              beta, c, (int)ldc);
    __atomic_add_fetch(&pdg_blas_calls, 1, __ATOMIC_RELAXED);
    return 1;
  }
  if (!pdg_blas_layout(m, k, a_m, a_k, &ta, &lda) || !pdg_blas_layout(k, n, b_k, b_n, &tb, &ldb))
    return 0;
  pdg_sgemm(PDG_ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b, (int)ldb, beta,
            c, (int)ldc);
  __atomic_add_fetch(&pdg_blas_calls, 1, __ATOMIC_RELAXED);
  return 1;
}
