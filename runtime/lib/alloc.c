/* The counting allocator behind the compiled code's memref.alloc.

   Every block starts with a 16-byte header just below the pointer handed
   out: the pointer malloc returned, then the size. Blocks are aligned as the
   lowering asks (64 bytes for buffers), so the code may use aligned vector
   moves on them.

   Large blocks freed are kept for an allocation of the same size: a program
   run repeatedly (a training loop) allocates the same stores each run, and
   a node body the same temporaries each step, and fresh pages from the
   kernel cost a page fault each on first touch. Kept and live bytes
   together stay within the most this process has had live (the highest
   peak of its runs so far, this one's included): an allocation no kept
   block fits releases the least recently kept ones until the new block
   fits under that bound, so kept memory never raises the process's
   high-water mark, and a run of
   other sizes (the first run after a warm-up of fewer iterations) still
   reuses every block whose size it shares. A store that grows releases the
   least recently kept ones until its new bytes fit under that bound as
   well. Cached bytes are not live.

   Failure: before the run (pdg_running == 0) the entry only allocates its
   stores, so a block that cannot be had (malloc fails, or the stores would
   pass pdg_memory_limit) stops the run (PDG_STOP_MEMORY) and the entry gets
   a stand-in that it never writes (every step checks pdg_abort first) and
   that free ignores. Inside node bodies nothing can go on without the
   block: the process reports it and aborts. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t pdg_bytes_live;
int64_t pdg_bytes_peak;
int64_t pdg_memory_limit;
int64_t pdg_bytes_kept;

#define PDG_CACHE_MIN_BYTES (64 * 1024)
/* A GRPO iteration at d_model 512 frees about 500 blocks of 64 KiB or more
   per run (stores, then temporaries); 256 slots dropped half of them. */
#define PDG_CACHE_SLOTS 4096
/* Kept blocks, least recently kept first. */
static void *pdg_cache[PDG_CACHE_SLOTS];
static int pdg_cache_count;
/* The highest peak of the runs before this one: kept bytes may fill up to it. */
static int64_t pdg_last_peak;

/* Handed out for an allocation before the run that failed. */
static char pdg_no_memory[64] __attribute__((aligned(64)));

/* The counters and the cache are shared by the threads of parallel loops. */
static char pdg_alloc_busy;
static void pdg_alloc_lock(void) {
  while (__atomic_test_and_set(&pdg_alloc_busy, __ATOMIC_ACQUIRE))
    ;
}
static void pdg_alloc_unlock(void) { __atomic_clear(&pdg_alloc_busy, __ATOMIC_RELEASE); }

/* For pdg_forget_pool (threads.c): a child of fork() has one thread. */
void pdg_reset_allocation_lock(void) { pdg_alloc_busy = 0; }

static void pdg_release_raw(void *ptr) { free((void *)(uintptr_t)((int64_t *)ptr - 2)[0]); }

static int64_t pdg_block_size(void *ptr) { return ((int64_t *)ptr - 2)[1]; }

/* Takes kept block `i` out of the cache, keeping the order of the rest. */
static void *pdg_uncache(int i) {
  void *p = pdg_cache[i];
  memmove(&pdg_cache[i], &pdg_cache[i + 1], (size_t)(pdg_cache_count - i - 1) * sizeof(void *));
  --pdg_cache_count;
  pdg_bytes_kept -= pdg_block_size(p);
  return p;
}

static void pdg_release_cache_locked(void) {
  for (int i = 0; i < pdg_cache_count; ++i)
    pdg_release_raw(pdg_cache[i]);
  pdg_cache_count = 0;
  pdg_bytes_kept = 0;
}

void pdg_release_cache(void) {
  pdg_alloc_lock();
  pdg_release_cache_locked();
  pdg_alloc_unlock();
}

void pdg_reset_allocation_counters(int64_t memory_limit, int64_t bytes_live) {
  pdg_alloc_lock();
  if (pdg_bytes_peak > pdg_last_peak)
    pdg_last_peak = pdg_bytes_peak;
  pdg_bytes_live = pdg_bytes_peak = bytes_live > 0 ? bytes_live : 0;
  pdg_memory_limit = memory_limit > 0 ? memory_limit : 0;
  pdg_alloc_unlock();
}

/* Releases the least recently kept blocks until `more` live bytes fit
   beside the rest under the high-water mark. Called with the lock held. */
static void pdg_evict_for(int64_t more) {
  int64_t bound = pdg_last_peak > pdg_bytes_peak ? pdg_last_peak : pdg_bytes_peak;
  while (pdg_cache_count && pdg_bytes_live + more + pdg_bytes_kept > bound)
    pdg_release_raw(pdg_uncache(0));
}

/* A kept block of this size and alignment, the most recently kept; else
   none, and the least recently kept blocks are released until `size` more
   live bytes fit beside the rest under the high-water mark. Called with
   the lock held. */
static void *pdg_cached(size_t alignment, size_t size) {
  for (int i = pdg_cache_count - 1; i >= 0; --i) {
    void *p = pdg_cache[i];
    if (pdg_block_size(p) == (int64_t)size && (uintptr_t)p % alignment == 0)
      return pdg_uncache(i);
  }
  pdg_evict_for((int64_t)size);
  return NULL;
}

void pdg_make_room(int64_t more) {
  pdg_alloc_lock();
  pdg_evict_for(more);
  pdg_alloc_unlock();
}

static void *pdg_out_of_memory(size_t size, int over_limit) {
  if (!__atomic_load_n(&pdg_running, __ATOMIC_ACQUIRE)) {
    pdg_fault_memory(-1, (int64_t)size, over_limit ? pdg_memory_limit : 0);
    return pdg_no_memory;
  }
  fprintf(stderr,
          "pdg: out of memory: a node body needed %zu bytes more (%lld bytes live); the "
          "process cannot go on\n",
          size, (long long)pdg_bytes_live);
  fflush(stderr);
  abort();
}

static void *pdg_alloc(size_t alignment, size_t size) {
  if (alignment < 16)
    alignment = 16;
  if (size > (size_t)INT64_MAX / 2)
    return pdg_out_of_memory(size, 0);
  int running = __atomic_load_n(&pdg_running, __ATOMIC_ACQUIRE);
  pdg_alloc_lock();
  if (!running && pdg_memory_limit && pdg_bytes_live + (int64_t)size > pdg_memory_limit) {
    pdg_alloc_unlock();
    return pdg_out_of_memory(size, 1);
  }
  /* During the run a node body's temporary is made even past the limit
     (nothing could go on without it), but the run then stops: a run never
     ends well having passed its limit. */
  if (running && pdg_memory_limit && pdg_bytes_live + (int64_t)size > pdg_memory_limit)
    pdg_fault_memory(-2, pdg_bytes_live + (int64_t)size, pdg_memory_limit);
  void *at = size >= PDG_CACHE_MIN_BYTES && pdg_cache_count ? pdg_cached(alignment, size) : NULL;
  if (!at) {
    char *raw = (char *)malloc(size + 16 + alignment);
    if (!raw) {
      pdg_alloc_unlock();
      return pdg_out_of_memory(size, 0);
    }
    at = (void *)(((uintptr_t)raw + 16 + alignment - 1) & ~(uintptr_t)(alignment - 1));
    int64_t *header = (int64_t *)at - 2;
    header[0] = (int64_t)(uintptr_t)raw;
    header[1] = (int64_t)size;
  }
  pdg_bytes_live += (int64_t)size;
  if (pdg_bytes_live > pdg_bytes_peak)
    pdg_bytes_peak = pdg_bytes_live;
  pdg_alloc_unlock();
  return at;
}

void *_mlir_memref_to_llvm_alloc(size_t size) { return pdg_alloc(16, size); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return pdg_alloc(alignment, size);
}

/* Frees a block, or keeps a large one for reuse; `counted`: it was live
   in this run's counters. */
static void pdg_release(void *ptr, int counted) {
  if (!ptr || ptr == (void *)pdg_no_memory)
    return;
  int64_t size = ((int64_t *)ptr - 2)[1];
  pdg_alloc_lock();
  if (counted)
    pdg_bytes_live -= size;
  int keep = size >= PDG_CACHE_MIN_BYTES && pdg_cache_count < PDG_CACHE_SLOTS;
  if (keep) {
    pdg_cache[pdg_cache_count++] = ptr;
    pdg_bytes_kept += size;
  }
  pdg_alloc_unlock();
  if (!keep)
    pdg_release_raw(ptr);
}

void _mlir_memref_to_llvm_free(void *ptr) { pdg_release(ptr, 1); }

void pdg_free_result(void *ptr) { pdg_release(ptr, 0); }

/* For grow.c: the block behind a pointer handed out, and its accounting. */
int pdg_is_stand_in(const void *ptr) { return ptr == (const void *)pdg_no_memory; }

void pdg_account_resize(int64_t old_size, int64_t new_size) {
  pdg_alloc_lock();
  pdg_bytes_live += new_size - old_size;
  if (pdg_bytes_live > pdg_bytes_peak)
    pdg_bytes_peak = pdg_bytes_live;
  pdg_alloc_unlock();
}

int pdg_would_pass_limit(int64_t old_size, int64_t new_size) {
  pdg_alloc_lock();
  int over = pdg_memory_limit && pdg_bytes_live - old_size + new_size > pdg_memory_limit;
  pdg_alloc_unlock();
  return over;
}
