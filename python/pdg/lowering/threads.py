"""The thread pool that runs a program's parallel loops, in C.

The driver writes the points of a node as an `scf.parallel`; upstream's
convert-scf-to-openmp and the OpenMP translation turn it into an outlined
function and five calls of the OpenMP runtime's ABI (`__kmpc_fork_call`
with one packed argument, `__kmpc_for_static_init_8u`, `..._fini`,
`__kmpc_barrier`, `__kmpc_global_thread_num`). No OpenMP runtime is
installed on a fresh machine, so those five are defined here, on pthreads,
and the library still needs nothing but libc and libm.

The pool starts at the first parallel loop: one worker per CPU this
process may run on, less the calling thread (`PDG_NUM_THREADS` overrides,
1 runs everything on the caller). Between loops a worker spins a while (the
next node of a step comes within microseconds), then sleeps. A parallel
loop reached inside another, or while another thread holds the pool, runs
on its caller alone. Each loaded program has its own pool; a child made by
fork() starts a new one."""

from __future__ import annotations

THREADS_C = r"""
/* ---- Thread pool behind the OpenMP ABI calls of parallel loops ---- */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>

#define PDG_MAX_THREADS 64
/* How long a worker polls for the next loop before it sleeps: the loops of
   one step come microseconds apart, but a worker that keeps polling after
   the program returned takes a core from whatever runs next (another
   program's pool, the Python around it). */
#define PDG_SPIN_NS 30000

typedef void (*pdg_task)(int32_t *gtid, int32_t *btid, void *arg);

static struct {
  int size;        /* threads in a full team, the caller included; 0: not started */
  pthread_mutex_t owner; /* held by the thread whose loop the team runs */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  uint64_t generation; /* one more per loop handed to the workers */
  int32_t sleepers;
  int32_t pending; /* workers not done with the current loop */
  pdg_task task;
  void *arg;
  int32_t arrived; /* barrier */
  uint32_t phase;
} pdg_pool = {0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
              PTHREAD_COND_INITIALIZER};

static __thread int32_t pdg_thread_id;   /* 0: the caller */
static __thread int32_t pdg_team_size = 1; /* of the loop this thread runs in */

static inline void pdg_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static int64_t pdg_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void *pdg_worker(void *p) {
  pdg_thread_id = (int32_t)(intptr_t)p;
  uint64_t seen = 0; /* the pool starts at generation 0, before its first loop */
  for (;;) {
    uint64_t next;
    int spins = 0;
    int64_t until = 0;
    while ((next = __atomic_load_n(&pdg_pool.generation, __ATOMIC_ACQUIRE)) == seen) {
      if (++spins % 64 != 0) {
        pdg_pause();
        continue;
      }
      if (until == 0)
        until = pdg_now_ns() + PDG_SPIN_NS;
      if (pdg_now_ns() < until)
        continue;
      pthread_mutex_lock(&pdg_pool.lock);
      __atomic_add_fetch(&pdg_pool.sleepers, 1, __ATOMIC_SEQ_CST);
      while (__atomic_load_n(&pdg_pool.generation, __ATOMIC_SEQ_CST) == seen)
        pthread_cond_wait(&pdg_pool.wake, &pdg_pool.lock);
      __atomic_sub_fetch(&pdg_pool.sleepers, 1, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&pdg_pool.lock);
      spins = 0;
      until = 0;
    }
    seen = next;
    int32_t gtid = pdg_thread_id, btid = pdg_thread_id;
    pdg_team_size = pdg_pool.size;
    pdg_pool.task(&gtid, &btid, pdg_pool.arg);
    pdg_team_size = 1;
    __atomic_sub_fetch(&pdg_pool.pending, 1, __ATOMIC_ACQ_REL);
  }
  return NULL;
}

static int pdg_wanted_threads(void) {
  const char *env = getenv("PDG_NUM_THREADS");
  int n = env ? atoi(env) : 0;
  if (n <= 0) {
    cpu_set_t cpus;
    n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  }
  return n < 1 ? 1 : n > PDG_MAX_THREADS ? PDG_MAX_THREADS : n;
}

/* In a child made by fork(): only the forking thread exists. The pool
   starts anew, and its locks and condition variable are made fresh (a
   copy may record the parent's sleeping workers as waiters, and a
   broadcast would then wait for them forever). */
static void pdg_forget_pool(void) {
  pthread_mutex_init(&pdg_pool.owner, NULL);
  pthread_mutex_init(&pdg_pool.lock, NULL);
  pthread_cond_init(&pdg_pool.wake, NULL);
  pdg_pool.size = 0;
  pdg_pool.sleepers = pdg_pool.pending = pdg_pool.arrived = 0;
  pdg_alloc_busy = 0;
}

static void pdg_start_pool(void) {
  int n = pdg_wanted_threads(), size = 1;
  pdg_pool.generation = 0;
  for (int i = 1; i < n; ++i) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&thread, &attr, pdg_worker, (void *)(intptr_t)i);
    pthread_attr_destroy(&attr);
    if (failed)
      break; /* run with the threads there are */
    size = i + 1;
  }
  /* Set once: pdg_thread_slots reads it without the lock. */
  __atomic_store_n(&pdg_pool.size, size, __ATOMIC_RELEASE);
  static int registered;
  if (!registered++)
    pthread_atfork(NULL, NULL, pdg_forget_pool);
}

/* How many threads a loop can run on (starting the pool), and which one
   this is: the driver's per-thread scratch (wrapped windows) and the tiles
   of pdg-parallelize-large-ops. Bodies ask at every call: no lock once the
   pool has started. */
int64_t pdg_thread_slots(void) {
  int64_t size = __atomic_load_n(&pdg_pool.size, __ATOMIC_ACQUIRE);
  if (size)
    return size;
  pthread_mutex_lock(&pdg_pool.owner);
  if (pdg_pool.size == 0)
    pdg_start_pool();
  size = pdg_pool.size;
  pthread_mutex_unlock(&pdg_pool.owner);
  return size;
}

int64_t pdg_thread_index(void) { return pdg_thread_id; }

__attribute__((visibility("hidden"))) int32_t __kmpc_global_thread_num(void *loc) {
  (void)loc;
  return pdg_thread_id;
}

/* The OpenMP translation packs what the loop reads into one struct: one
   argument after the task. */
__attribute__((visibility("hidden"))) void __kmpc_fork_call(void *loc, int32_t argc,
                                                            pdg_task task, ...) {
  (void)loc;
  void *arg = NULL;
  va_list args;
  va_start(args, task);
  if (argc > 0)
    arg = va_arg(args, void *);
  va_end(args);
  if (argc > 1)
    abort(); /* not what the translation emits */
  int32_t gtid = pdg_thread_id, btid = 0;
  if (pdg_team_size > 1 || pthread_mutex_trylock(&pdg_pool.owner) != 0) {
    /* Nested, or another caller has the pool: a team of one, this thread. */
    int32_t outer = pdg_team_size;
    pdg_team_size = 1;
    task(&gtid, &btid, arg);
    pdg_team_size = outer;
    return;
  }
  if (pdg_pool.size == 0)
    pdg_start_pool();
  if (pdg_pool.size == 1) {
    pthread_mutex_unlock(&pdg_pool.owner);
    task(&gtid, &btid, arg);
    return;
  }
  pdg_pool.task = task;
  pdg_pool.arg = arg;
  pdg_pool.pending = pdg_pool.size - 1;
  __atomic_add_fetch(&pdg_pool.generation, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&pdg_pool.sleepers, __ATOMIC_SEQ_CST) > 0) {
    pthread_mutex_lock(&pdg_pool.lock);
    pthread_cond_broadcast(&pdg_pool.wake);
    pthread_mutex_unlock(&pdg_pool.lock);
  }
  pdg_team_size = pdg_pool.size;
  task(&gtid, &btid, arg);
  pdg_team_size = 1;
  while (__atomic_load_n(&pdg_pool.pending, __ATOMIC_ACQUIRE) > 0)
    pdg_pause();
  pthread_mutex_unlock(&pdg_pool.owner);
}

/* This thread's share of iterations [*lower, *upper] (inclusive; a zero
   trip count comes as upper = lower - 1): contiguous, sizes differing by
   at most one. An empty share is upper = lower - 1 again. Index loops give
   the unsigned 64-bit form only. */
__attribute__((visibility("hidden"))) void __kmpc_for_static_init_8u(
    void *loc, int32_t gtid, int32_t schedule, int32_t *last, uint64_t *lower, uint64_t *upper,
    uint64_t *stride, uint64_t incr, uint64_t chunk) {
  (void)loc, (void)gtid, (void)schedule, (void)incr, (void)chunk;
  uint64_t trips = *upper - *lower + 1;
  uint64_t team = (uint64_t)pdg_team_size, me = (uint64_t)pdg_thread_id;
  if (team == 1) {
    *last = trips != 0;
    *stride = trips;
    return;
  }
  uint64_t each = trips / team, extra = trips % team;
  uint64_t first = me * each + (me < extra ? me : extra);
  uint64_t count = each + (me < extra);
  *lower += first;
  *upper = *lower + count - 1;
  *last = count != 0 && first + count == trips;
  *stride = trips;
}

__attribute__((visibility("hidden"))) void __kmpc_for_static_fini(void *loc, int32_t gtid) {
  (void)loc, (void)gtid;
}

__attribute__((visibility("hidden"))) void __kmpc_barrier(void *loc, int32_t gtid) {
  (void)loc, (void)gtid;
  int32_t team = pdg_team_size;
  if (team <= 1)
    return;
  uint32_t phase = __atomic_load_n(&pdg_pool.phase, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&pdg_pool.arrived, 1, __ATOMIC_ACQ_REL) == team) {
    __atomic_store_n(&pdg_pool.arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pdg_pool.phase, phase + 1, __ATOMIC_RELEASE);
  } else {
    while (__atomic_load_n(&pdg_pool.phase, __ATOMIC_ACQUIRE) == phase)
      pdg_pause();
  }
}
"""
