/* What the runtime's files share and nothing outside them sees. */
#ifndef PDG_RUNTIME_INTERNAL_H
#define PDG_RUNTIME_INTERNAL_H

#include "pdg/runtime.h"

#define PDG_HIDDEN __attribute__((visibility("hidden")))

/* run.c: stops the run for memory (unless it stopped already) and records
   the fault: `site` is a growable store's number, -1 for the stores made
   before the run, -2 for a node body's temporaries during it. */
PDG_HIDDEN void pdg_fault_memory(int64_t site, int64_t bytes, int64_t limit);

/* alloc.c */
PDG_HIDDEN void pdg_reset_allocation_counters(int64_t memory_limit, int64_t bytes_live);
/* Forgets the points a driver's loop noted on this thread (a run that
   stopped inside a loop never left it): threads.c. */
PDG_HIDDEN void pdg_forget_loop_points(void);
PDG_HIDDEN void pdg_reset_allocation_lock(void);
PDG_HIDDEN int pdg_is_stand_in(const void *ptr);
PDG_HIDDEN void pdg_account_resize(int64_t old_size, int64_t new_size);
/* Releases kept blocks until `more` live bytes fit under the high-water mark. */
PDG_HIDDEN void pdg_make_room(int64_t more);
PDG_HIDDEN int pdg_would_pass_limit(int64_t old_size, int64_t new_size);

#endif /* PDG_RUNTIME_INTERNAL_H */
