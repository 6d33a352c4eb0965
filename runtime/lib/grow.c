/* Growing a store along one dim, in place where realloc can.

   Stores have the identity layout. The rows (one per index of the dims
   before `dim`) move apart from the last down, so old and new data never
   need two buffers.

   Growing moves the whole store, so a program's later calls start each
   store at the capacity an earlier call reached (pdg_grow_start): a
   training loop grows its stores in its first call only. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int64_t pdg_grows;

static void pdg_keep_old(int64_t *out, const int64_t *old, int64_t rank, int64_t store,
                         int64_t bytes, int64_t limit) {
  memmove(out, old, (size_t)(3 + 2 * rank) * sizeof(int64_t));
  pdg_fault_memory(store, bytes, limit);
}

void pdg_grow(int64_t *out, const int64_t *old, int64_t rank, int64_t dim, int64_t cap,
              int64_t elem, int64_t store) {
  const int64_t *sizes = old + 3, *strides = old + 3 + rank;
  char *data = (char *)old[0];
  int64_t rows = 1, new_row, size;
  int overflow = 0;
  for (int64_t i = 0; i < dim; ++i)
    overflow |= __builtin_mul_overflow(rows, sizes[i], &rows);
  overflow |= __builtin_mul_overflow(cap, strides[dim], &new_row);
  overflow |= __builtin_mul_overflow(new_row, elem, &new_row);
  overflow |= __builtin_mul_overflow(rows, new_row, &size);
  if (overflow || size > INT64_MAX / 2) {
    pdg_keep_old(out, old, rank, store, INT64_MAX, 0);
    return;
  }
  if (pdg_is_stand_in(data)) { /* its allocation failed: the run is stopping */
    pdg_keep_old(out, old, rank, store, size, 0);
    return;
  }
  int64_t old_row = sizes[dim] * strides[dim] * elem;
  int64_t *header = (int64_t *)data - 2;
  char *raw = (char *)(uintptr_t)header[0];
  int64_t old_size = header[1];
  if (pdg_would_pass_limit(old_size, size)) {
    pdg_keep_old(out, old, rank, store, size, pdg_memory_limit);
    return;
  }
  pdg_make_room(size - old_size); /* kept blocks never raise the high-water mark */
  size_t offset = (size_t)(data - raw);
  char *moved = (char *)realloc(raw, (size_t)size + 16 + 64);
  if (!moved) {
    pdg_keep_old(out, old, rank, store, size, 0);
    return;
  }
  raw = moved;
  /* realloc keeps malloc's alignment only: realign to 64 bytes. */
  uintptr_t at = ((uintptr_t)raw + 16 + 63) & ~(uintptr_t)63;
  if (at - (uintptr_t)raw != offset)
    memmove((void *)at, raw + offset, (size_t)old_size);
  header = (int64_t *)at - 2;
  header[0] = (int64_t)(uintptr_t)raw;
  header[1] = size;
  pdg_account_resize(old_size, size);
  __atomic_add_fetch(&pdg_grows, 1, __ATOMIC_RELAXED);
  char *base = (char *)at;
  for (int64_t r = rows - 1; r > 0; --r)
    memmove(base + r * new_row, base + r * old_row, (size_t)old_row);
  out[0] = out[1] = (int64_t)base;
  out[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    out[3 + i] = i == dim ? cap : sizes[i];
    out[3 + rank + i] = stride;
    stride *= out[3 + i];
  }
}

int64_t pdg_grow_start(const int64_t *reached, int64_t cap, int64_t step_bytes) {
  int64_t steps = __atomic_load_n(reached, __ATOMIC_RELAXED), bytes;
  if (steps <= cap || step_bytes < 0 || __builtin_mul_overflow(steps, step_bytes, &bytes))
    return cap;
  /* Only where it fits beside what is live: the steps this call needs may
     be fewer, and growing from `cap` would not stop the run early. */
  return pdg_would_pass_limit(0, bytes) ? cap : steps;
}

void pdg_grow_reached(int64_t *reached, int64_t cap) {
  int64_t steps = __atomic_load_n(reached, __ATOMIC_RELAXED);
  while (cap > steps &&
         !__atomic_compare_exchange_n(reached, &steps, cap, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}
