/* Run state: why a run stopped, the first fault, the step, and SIGINT. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "internal.h"

#include <signal.h>
#include <string.h>

int8_t pdg_abort;
pdg_fault_t pdg_fault;
int64_t pdg_step;
int8_t pdg_running;
const int32_t pdg_runtime_version = PDG_RUNTIME_VERSION;

void pdg_stop(int8_t reason) {
  int8_t running = PDG_RUNNING;
  __atomic_compare_exchange_n(&pdg_abort, &running, reason, 0, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
}

void pdg_begin_run(int64_t memory_limit, int64_t bytes_live) {
  memset(&pdg_fault, 0, sizeof pdg_fault);
  pdg_fault.site = -1;
  pdg_step = 0;
  pdg_running = 0;
  pdg_reset_allocation_counters(memory_limit, bytes_live);
  pdg_forget_loop_points();
  __atomic_store_n(&pdg_abort, PDG_RUNNING, __ATOMIC_SEQ_CST);
}

/* Several threads may fault at once: the one that sets the reason writes
   the record, and the others leave it alone. */
static void record_fault(int8_t reason, int64_t site, int64_t value, int64_t bound, int64_t n,
                         const int64_t coords[PDG_FAULT_COORDS]) {
  int8_t running = PDG_RUNNING;
  if (!__atomic_compare_exchange_n(&pdg_abort, &running, reason, 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    return;
  pdg_fault.site = site;
  pdg_fault.value = value;
  pdg_fault.bound = bound;
  pdg_fault.ncoords = n < PDG_FAULT_COORDS ? n : PDG_FAULT_COORDS;
  for (int i = 0; i < PDG_FAULT_COORDS; ++i)
    pdg_fault.coords[i] = coords[i];
}

void pdg_index_fault(int64_t site, int64_t value, int64_t bound, int64_t n, int64_t c0,
                     int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6,
                     int64_t c7) {
  int64_t coords[PDG_FAULT_COORDS] = {c0, c1, c2, c3, c4, c5, c6, c7};
  record_fault(PDG_STOP_INDEX, site, value, bound, n, coords);
}

void pdg_ended_fault(int64_t site, int64_t step, int64_t length, int64_t n, int64_t c0,
                     int64_t c1, int64_t c2, int64_t c3, int64_t c4, int64_t c5, int64_t c6,
                     int64_t c7) {
  int64_t coords[PDG_FAULT_COORDS] = {c0, c1, c2, c3, c4, c5, c6, c7};
  record_fault(PDG_STOP_ENDED, site, step, length, n, coords);
}

void pdg_fault_memory(int64_t site, int64_t bytes, int64_t limit) {
  int8_t running = PDG_RUNNING;
  if (!__atomic_compare_exchange_n(&pdg_abort, &running, PDG_STOP_MEMORY, 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    return;
  pdg_fault.site = site;
  pdg_fault.value = bytes;
  pdg_fault.bound = limit;
}

/* ---- SIGINT -------------------------------------------------------------- */

static struct sigaction pdg_previous_sigint;
static int pdg_catching;

static void pdg_on_sigint(int sig) {
  (void)sig;
  pdg_stop(PDG_STOP_INTERRUPT);
}

int pdg_catch_interrupts(void) {
  if (pdg_catching)
    return 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = pdg_on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGINT, &action, &pdg_previous_sigint) != 0)
    return -1;
  pdg_catching = 1;
  return 0;
}

void pdg_release_interrupts(void) {
  if (!pdg_catching)
    return;
  sigaction(SIGINT, &pdg_previous_sigint, NULL);
  pdg_catching = 0;
}
