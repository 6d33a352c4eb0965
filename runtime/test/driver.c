/* Test driver for pdg's C runtime: calls the pool the way the OpenMP
   translation does, so the tests can run parallel loops without MLIR. */
#include "pdg/runtime.h"

#include <stdint.h>

typedef void (*pdg_task)(int32_t *gtid, int32_t *btid, void *arg);
void __kmpc_fork_call(void *loc, int32_t argc, pdg_task task, ...);
void __kmpc_for_static_init_8u(void *loc, int32_t gtid, int32_t schedule, int32_t *last,
                               uint64_t *lower, uint64_t *upper, uint64_t *stride, uint64_t incr,
                               uint64_t chunk);
void __kmpc_barrier(void *loc, int32_t gtid);

struct loop {
  int64_t n;
  int64_t *hits;  /* per iteration: how many threads ran it */
  int64_t *after; /* per iteration: hits seen after the barrier (all 1) */
};

/* This thread's share [*lower, *upper] of n iterations, asked for as the
   OpenMP translation asks (schedule static, 34). */
static void share(int32_t gtid, int64_t n, uint64_t *lower, uint64_t *upper) {
  uint64_t stride = 1;
  int32_t last = 0;
  *lower = 0;
  *upper = (uint64_t)n - 1;
  __kmpc_for_static_init_8u(0, gtid, 34, &last, lower, upper, &stride, 1, 1);
}

static void task(int32_t *gtid, int32_t *btid, void *arg) {
  (void)btid;
  struct loop *l = (struct loop *)arg;
  uint64_t lower, upper;
  share(*gtid, l->n, &lower, &upper);
  for (uint64_t i = lower; i <= upper && i < (uint64_t)l->n; ++i)
    __atomic_add_fetch(&l->hits[i], 1, __ATOMIC_RELAXED);
  __kmpc_barrier(0, *gtid);
  /* After the barrier every iteration must have been run by some thread. */
  for (uint64_t i = lower; i <= upper && i < (uint64_t)l->n; ++i) {
    int64_t other = (int64_t)((i + 1) % (uint64_t)l->n);
    l->after[i] = __atomic_load_n(&l->hits[other], __ATOMIC_RELAXED);
  }
}

/* Runs `loops` parallel loops of n iterations; returns 0 if every
   iteration ran exactly once each time and the barrier held, else the
   first loop that went wrong plus one. */
int64_t pdg_test_loops(int64_t loops, int64_t n, int64_t *hits, int64_t *after) {
  struct loop l = {n, hits, after};
  for (int64_t k = 0; k < loops; ++k) {
    for (int64_t i = 0; i < n; ++i)
      hits[i] = after[i] = 0;
    __kmpc_fork_call(0, 1, task, &l);
    for (int64_t i = 0; i < n; ++i)
      if (hits[i] != 1 || after[i] != 1)
        return k + 1;
  }
  return 0;
}

struct points_loop {
  int64_t n;
  int32_t *split;  /* per iteration: pdg_ops_split() where it ran */
  int64_t *thread; /* per iteration: the thread that ran it */
};

static void points_task(int32_t *gtid, int32_t *btid, void *arg) {
  (void)btid;
  struct points_loop *l = (struct points_loop *)arg;
  uint64_t lower, upper;
  share(*gtid, l->n, &lower, &upper);
  for (uint64_t i = lower; i <= upper && i < (uint64_t)l->n; ++i) {
    l->split[i] = pdg_ops_split();
    l->thread[i] = pdg_thread_index();
  }
}

/* A driver's loop of n iterations noted as having `points` points (as
   pdg-conditional-forks emits it): each iteration records what the bodies
   would ask. Returns what is noted after the loop (restored). */
int64_t pdg_test_loop_points(int64_t points, int64_t n, int32_t *split, int64_t *thread) {
  int64_t saved = pdg_loop_enter(points);
  struct points_loop l = {n, split, thread};
  __kmpc_fork_call(0, 1, points_task, &l);
  pdg_loop_leave(saved);
  int64_t now = pdg_loop_enter(-1);
  pdg_loop_leave(now);
  return now;
}
