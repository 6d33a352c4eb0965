/* The thread pool that runs a program's parallel loops.

   The driver writes the points of a node as an `scf.parallel`; upstream's
   convert-scf-to-openmp and the OpenMP translation turn it into an outlined
   function and calls of the OpenMP runtime's ABI (`__kmpc_fork_call` with
   one packed argument, `__kmpc_for_static_init_8u`, `..._fini`,
   `__kmpc_barrier`, `__kmpc_global_thread_num`, and `__kmpc_fork_call_if`
   where a region has an if clause). No OpenMP runtime is
   installed on a fresh machine, so those are defined here, on pthreads, and
   a program needs nothing but libc and libm.

   The pool starts at the first parallel loop: one worker per CPU this
   process may run on, less the calling thread (PDG_NUM_THREADS overrides; 1
   runs everything on the caller). A parallel loop reached inside another,
   or while another thread holds the pool, runs on its caller alone. Each
   loaded program has its own pool; a child made by fork() starts a new one.

   Waiting: the loops of one step come microseconds apart, so a thread that
   waits (a worker for the next loop, the caller for the workers, a thread at
   a barrier) first polls for a short while, then sleeps on a futex. Polling
   without end would be faster on an idle machine, but when the machine is
   busy a polling thread takes the core from the very thread it waits for. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "internal.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* How long a waiting thread polls before it sleeps. */
#define PDG_SPIN_NS 50000

typedef void (*pdg_task)(int32_t *gtid, int32_t *btid, void *arg);

static struct {
  int size;              /* threads in a full team, the caller included; 0: not started */
  pthread_mutex_t owner; /* held by the thread whose loop the team runs */
  uint32_t generation;   /* one more per loop handed to the workers */
  int32_t sleepers;      /* workers asleep on `generation` */
  int32_t pending;       /* workers not done with the current loop */
  int32_t caller_asleep; /* the caller sleeps on `pending` */
  pdg_task task;
  void *arg;
  int64_t loop_points; /* the caller's pdg_loop_points, for the workers */
  int32_t arrived; /* barrier: threads there */
  uint32_t phase;  /* barrier: one more each time all arrived */
  int32_t barrier_sleepers;
} pdg_pool = {0, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0};

static __thread int32_t pdg_thread_id;     /* 0: the caller */
static __thread int32_t pdg_team_size = 1; /* of the loop this thread runs in */
/* The points of the driver's loop whose bodies this thread runs (-1: none
   known): pdg_loop_enter sets it on the caller, a fork hands it on. */
static __thread int64_t pdg_loop_points = -1;

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

/* Sleeps while *word == value (it may wake early: callers check again). */
static void pdg_sleep_on(void *word, uint32_t value) {
#ifdef __linux__
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
#else
  (void)word, (void)value;
  sched_yield();
#endif
}

static void pdg_wake_all(void *word) {
#ifdef __linux__
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
  (void)word;
#endif
}

/* Polls until *word != value for PDG_SPIN_NS; returns whether it changed. */
static int pdg_poll(const uint32_t *word, uint32_t value) {
  int64_t until = 0;
  for (int spins = 1;; ++spins) {
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value)
      return 1;
    if (spins % 64 != 0) {
      pdg_pause();
      continue;
    }
    int64_t now = pdg_now_ns();
    if (until == 0)
      until = now + PDG_SPIN_NS;
    else if (now >= until)
      return 0;
    sched_yield(); /* on a busy machine, let the awaited thread run */
  }
}

/* Waits until *word != value: polls, then sleeps (counted in *sleepers, so
   that whoever changes the word knows to wake it). */
static void pdg_wait_change(uint32_t *word, uint32_t value, int32_t *sleepers) {
  while (!pdg_poll(word, value)) {
    __atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(word, __ATOMIC_SEQ_CST) == value)
      pdg_sleep_on(word, value);
    __atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
  }
}

static void *pdg_worker(void *p) {
  pdg_thread_id = (int32_t)(intptr_t)p;
  uint32_t seen = 0; /* the pool starts at generation 0, before its first loop */
  for (;;) {
    pdg_wait_change(&pdg_pool.generation, seen, &pdg_pool.sleepers);
    seen = __atomic_load_n(&pdg_pool.generation, __ATOMIC_ACQUIRE);
    int32_t gtid = pdg_thread_id, btid = pdg_thread_id;
    pdg_team_size = pdg_pool.size;
    pdg_loop_points = pdg_pool.loop_points;
    pdg_pool.task(&gtid, &btid, pdg_pool.arg);
    pdg_team_size = 1;
    pdg_loop_points = -1;
    if (__atomic_sub_fetch(&pdg_pool.pending, 1, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&pdg_pool.caller_asleep, __ATOMIC_SEQ_CST))
      pdg_wake_all(&pdg_pool.pending);
  }
  return NULL;
}

static int pdg_wanted_threads(void) {
  const char *env = getenv("PDG_NUM_THREADS");
  char *end = NULL;
  long n = env ? strtol(env, &end, 10) : 0;
  if (!env || end == env || *end != '\0' || n <= 0) { /* the loader refuses bad values */
    cpu_set_t cpus;
    n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  }
  return n < 1 ? 1 : n > PDG_MAX_THREADS ? PDG_MAX_THREADS : (int)n;
}

/* In a child made by fork(): only the forking thread exists. The pool
   starts anew, and its locks are made fresh (a copy may be held by a thread
   that is not there). */
static void pdg_forget_pool(void) {
  pthread_mutex_init(&pdg_pool.owner, NULL);
  pdg_pool.size = 0;
  pdg_pool.sleepers = pdg_pool.pending = pdg_pool.caller_asleep = 0;
  pdg_pool.arrived = pdg_pool.barrier_sleepers = 0;
  pdg_reset_allocation_lock();
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

int64_t pdg_loop_enter(int64_t points) {
  int64_t previous = pdg_loop_points;
  pdg_loop_points = points;
  return previous;
}

void pdg_loop_leave(int64_t previous) { pdg_loop_points = previous; }

void pdg_forget_loop_points(void) { pdg_loop_points = -1; }

int64_t pdg_fork_from(void) {
  int64_t slots = pdg_thread_slots();
  return slots < PDG_WHOLE_OPS_FROM ? slots : PDG_WHOLE_OPS_FROM;
}

int32_t pdg_ops_split(void) { return pdg_loop_points < PDG_WHOLE_OPS_FROM; }

PDG_HIDDEN int32_t __kmpc_global_thread_num(void *loc) {
  (void)loc;
  return pdg_thread_id;
}

/* Runs `task` on the pool's team, or on this thread alone where the pool is
   taken: nested in another team, or held by another caller. */
static void pdg_fork(pdg_task task, void *arg) {
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
  pdg_pool.loop_points = pdg_loop_points;
  __atomic_store_n(&pdg_pool.pending, pdg_pool.size - 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&pdg_pool.generation, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&pdg_pool.sleepers, __ATOMIC_SEQ_CST) > 0)
    pdg_wake_all(&pdg_pool.generation);
  pdg_team_size = pdg_pool.size;
  task(&gtid, &btid, arg);
  pdg_team_size = 1;
  /* Wait for the workers: poll, then sleep on `pending` (the last worker
     wakes the caller when it sees caller_asleep). */
  int32_t left;
  while ((left = __atomic_load_n(&pdg_pool.pending, __ATOMIC_ACQUIRE)) > 0) {
    if (pdg_poll((const uint32_t *)&pdg_pool.pending, (uint32_t)left))
      continue;
    __atomic_store_n(&pdg_pool.caller_asleep, 1, __ATOMIC_SEQ_CST);
    left = __atomic_load_n(&pdg_pool.pending, __ATOMIC_SEQ_CST);
    if (left > 0)
      pdg_sleep_on(&pdg_pool.pending, (uint32_t)left);
    __atomic_store_n(&pdg_pool.caller_asleep, 0, __ATOMIC_SEQ_CST);
  }
  pthread_mutex_unlock(&pdg_pool.owner);
}

/* The OpenMP translation packs what the loop reads into one struct: one
   argument after the task. */
PDG_HIDDEN void __kmpc_fork_call(void *loc, int32_t argc, pdg_task task, ...) {
  (void)loc;
  void *arg = NULL;
  va_list args;
  va_start(args, task);
  if (argc > 0)
    arg = va_arg(args, void *);
  va_end(args);
  if (argc > 1)
    abort(); /* not what the translation emits */
  pdg_fork(task, arg);
}

/* A parallel region with an if clause (pdg-conditional-forks gives one to
   a loop whose body holds parallel loops of its own). Where `cond` is 0,
   the caller runs the region as a team of one and leaves the pool free, so
   the loops inside the region fork instead: one sequence's decode step
   shares out its matrix-vector products rather than its single point. */
PDG_HIDDEN void __kmpc_fork_call_if(void *loc, int32_t argc, pdg_task task, int32_t cond,
                                    void *arg) {
  (void)loc;
  if (argc == 0)
    arg = NULL;
  if (cond) {
    pdg_fork(task, arg);
    return;
  }
  int32_t gtid = pdg_thread_id, btid = 0;
  int32_t outer = pdg_team_size;
  pdg_team_size = 1; /* this thread runs every iteration */
  task(&gtid, &btid, arg);
  pdg_team_size = outer;
}

/* This thread's share of iterations [*lower, *upper] (inclusive; a zero
   trip count comes as upper = lower - 1): contiguous, sizes differing by at
   most one. An empty share is upper = lower - 1 again. Index loops give the
   unsigned 64-bit form only. */
PDG_HIDDEN void __kmpc_for_static_init_8u(void *loc, int32_t gtid, int32_t schedule,
                                          int32_t *last, uint64_t *lower, uint64_t *upper,
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

PDG_HIDDEN void __kmpc_for_static_fini(void *loc, int32_t gtid) { (void)loc, (void)gtid; }

PDG_HIDDEN void __kmpc_barrier(void *loc, int32_t gtid) {
  (void)loc, (void)gtid;
  int32_t team = pdg_team_size;
  if (team <= 1)
    return;
  uint32_t phase = __atomic_load_n(&pdg_pool.phase, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&pdg_pool.arrived, 1, __ATOMIC_ACQ_REL) == team) {
    __atomic_store_n(&pdg_pool.arrived, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pdg_pool.phase, phase + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pdg_pool.barrier_sleepers, __ATOMIC_SEQ_CST) > 0)
      pdg_wake_all(&pdg_pool.phase);
    return;
  }
  pdg_wait_change(&pdg_pool.phase, phase, &pdg_pool.barrier_sleepers);
}
