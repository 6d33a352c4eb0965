/* Collectives between the ranks of an MPI run: the calls a program's
   pdg.all_reduce, pdg.all_gather, pdg.broadcast, pdg.reduce_scatter and
   pdg.shift compile to (pdg/lowering/collectives.py).

   program.so does not link MPI. The loader binds a run to a communicator
   (pdg_mpi_bind) with the path of the libmpi that mpi4py loaded, the
   communicator's handle, and the handles of the datatypes and operations
   it needs, all as mpi4py reports them (`MPI._handleof`); the functions are
   looked up in that library here. Unbound, the program runs as a world of
   one rank: every collective is a copy (a broadcast from rank 0, a
   reduce-scatter of one block), and nothing of MPI is needed.

   Handles are passed as intptr_t. Open MPI's are pointers, MPICH's are
   ints; on the LP64 ABIs pdg targets (x86-64, AArch64) an int argument is
   read from the low half of the register or stack slot an intptr_t fills,
   so one declaration calls either library. */
#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef int (*pdg_allreduce_fn)(const void *send, void *recv, int count, intptr_t type,
                                intptr_t op, intptr_t comm);
typedef int (*pdg_bcast_fn)(void *buffer, int count, intptr_t type, int root, intptr_t comm);
typedef int (*pdg_allgather_fn)(const void *send, int send_count, intptr_t send_type, void *recv,
                                int recv_count, intptr_t recv_type, intptr_t comm);
typedef int (*pdg_reduce_scatter_fn)(const void *send, void *recv, int count, intptr_t type,
                                     intptr_t op, intptr_t comm);
typedef int (*pdg_sendrecv_fn)(const void *send, int send_count, intptr_t send_type, int dest,
                               int send_tag, void *recv, int recv_count, intptr_t recv_type,
                               int source, int recv_tag, intptr_t comm, void *status);

static struct {
  pdg_allreduce_fn allreduce;
  pdg_bcast_fn bcast;
  pdg_allgather_fn allgather;
  pdg_reduce_scatter_fn reduce_scatter;
  pdg_sendrecv_fn sendrecv;
  intptr_t comm;
  intptr_t types[PDG_ELEMENT_KINDS];
  intptr_t ops[2]; /* sum, max */
  int64_t rank, size;
} pdg_world = {.size = 1};

int64_t pdg_collective_calls;

int32_t pdg_mpi_bind(const char *library, intptr_t comm, int64_t rank, int64_t size,
                     const intptr_t *types, const intptr_t *ops) {
  /* RTLD_NOLOAD: the library mpi4py loaded, and MPI_Init'ed, or nothing. */
  void *handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    handle = dlopen(library, RTLD_NOW);
  if (!handle)
    return 1;
  pdg_allreduce_fn allreduce = (pdg_allreduce_fn)dlsym(handle, "MPI_Allreduce");
  pdg_bcast_fn bcast = (pdg_bcast_fn)dlsym(handle, "MPI_Bcast");
  pdg_allgather_fn allgather = (pdg_allgather_fn)dlsym(handle, "MPI_Allgather");
  pdg_reduce_scatter_fn reduce_scatter =
      (pdg_reduce_scatter_fn)dlsym(handle, "MPI_Reduce_scatter_block");
  pdg_sendrecv_fn sendrecv = (pdg_sendrecv_fn)dlsym(handle, "MPI_Sendrecv");
  if (!allreduce || !bcast || !allgather || !reduce_scatter || !sendrecv)
    return 2;
  if (size < 1 || rank < 0 || rank >= size)
    return 3;
  pdg_world.allreduce = allreduce;
  pdg_world.bcast = bcast;
  pdg_world.allgather = allgather;
  pdg_world.reduce_scatter = reduce_scatter;
  pdg_world.sendrecv = sendrecv;
  pdg_world.comm = comm;
  memcpy(pdg_world.types, types, sizeof pdg_world.types);
  memcpy(pdg_world.ops, ops, sizeof pdg_world.ops);
  pdg_world.rank = rank;
  pdg_world.size = size;
  return 0;
}

void pdg_mpi_unbind(void) {
  memset(&pdg_world, 0, sizeof pdg_world);
  pdg_world.size = 1;
}

int64_t pdg_world_rank(void) { return pdg_world.rank; }
int64_t pdg_world_size(void) { return pdg_world.size; }

/* A strided memref descriptor of any rank: {allocated, aligned, offset,
   sizes[rank], strides[rank]} (MLIR's C interface). */
typedef struct {
  void *allocated;
  char *aligned;
  int64_t offset;
  int64_t dims[];
} pdg_descriptor_t;

static int64_t pdg_count(int rank, const pdg_descriptor_t *d) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i)
    n *= d->dims[i];
  return n;
}

static int pdg_is_contiguous(int rank, const pdg_descriptor_t *d) {
  int64_t expected = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (d->dims[i] != 1 && d->dims[rank + i] != expected)
      return 0;
    expected *= d->dims[i];
  }
  return 1;
}

/* Copies between a strided view and a dense buffer, in row-major order
   (`to_dense`: view -> dense, else dense -> view). */
static void pdg_copy_strided(int rank, const pdg_descriptor_t *d, size_t element, char *dense,
                             int to_dense) {
  int64_t count = pdg_count(rank, d);
  int64_t index[PDG_COLLECTIVE_MAX_RANK + 1] = {0};
  for (int64_t k = 0; k < count; ++k) {
    int64_t at = d->offset;
    for (int i = 0; i < rank; ++i)
      at += index[i] * d->dims[rank + i];
    char *strided = d->aligned + at * (int64_t)element;
    if (to_dense)
      memcpy(dense + k * element, strided, element);
    else
      memcpy(strided, dense + k * element, element);
    for (int i = rank - 1; i >= 0; --i) {
      if (++index[i] < d->dims[i])
        break;
      index[i] = 0;
    }
  }
}

static void pdg_collective_fault(int64_t site, int64_t value, int64_t bound) {
  int8_t running = PDG_RUNNING;
  if (!__atomic_compare_exchange_n(&pdg_abort, &running, PDG_STOP_COLLECTIVE, 0,
                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    return;
  pdg_fault.site = site;
  pdg_fault.value = value;
  pdg_fault.bound = bound;
}

/* (r mod n) in 0..n-1, for a negative r too. */
static int64_t pdg_ring(int64_t r, int64_t n) { return ((r % n) + n) % n; }

/* in: this rank's point, out: the result's slot. `rank` is the result's
   point rank; the input's is the same, except an all-gather's, which has
   one dim less (the result stacks W of it), and a reduce-scatter's, which
   has one more (its W blocks). `root` is a broadcast's root or a shift's
   distance. */
static void pdg_collective(int rank, pdg_descriptor_t *in, pdg_descriptor_t *out, int32_t op,
                           int32_t element, int64_t root, int64_t site) {
  if (pdg_abort)
    return;
  int in_rank = op == PDG_ALL_GATHER ? rank - 1 : rank;
  if (op == PDG_REDUCE_SCATTER_SUM || op == PDG_REDUCE_SCATTER_MAX)
    in_rank = rank + 1;
  if (element < 0 || element >= PDG_ELEMENT_KINDS || op < 0 || op > PDG_SHIFT || in_rank < 0 ||
      in_rank > PDG_COLLECTIVE_MAX_RANK) {
    pdg_collective_fault(site, -1, -1);
    return;
  }
  size_t size = element == PDG_ELEMENT_F32 || element == PDG_ELEMENT_I32 ? 4 : 8;
  int64_t count = pdg_count(in_rank, in), out_count = pdg_count(rank, out);
  if (op == PDG_BROADCAST && root >= pdg_world.size) {
    pdg_collective_fault(site, root, pdg_world.size);
    return;
  }
  /* An all-gather's result slot holds every rank's point (sized by the
     symbol W); a reduce-scatter's input, one block per rank. */
  if (op == PDG_ALL_GATHER && out->dims[0] != pdg_world.size) {
    pdg_collective_fault(site, out->dims[0], pdg_world.size);
    return;
  }
  if (in_rank == rank + 1 && in->dims[0] != pdg_world.size) {
    pdg_collective_fault(site, in->dims[0], pdg_world.size);
    return;
  }
  if (out_count > INT_MAX || count > INT_MAX) {
    pdg_collective_fault(site, out_count > count ? out_count : count, INT_MAX);
    return;
  }
  /* Dense buffers for MPI: the views themselves where they are dense. */
  int dense_in = pdg_is_contiguous(in_rank, in), dense_out = pdg_is_contiguous(rank, out);
  char *send = in->aligned + in->offset * (int64_t)size;
  char *recv = out->aligned + out->offset * (int64_t)size;
  char *scratch = NULL;
  if (!dense_in || !dense_out) {
    scratch = malloc((size_t)(count + out_count) * size + 1);
    if (!scratch) {
      pdg_fault_memory(-2, (count + out_count) * (int64_t)size, 0);
      return;
    }
    if (!dense_in) {
      send = scratch;
      pdg_copy_strided(in_rank, in, size, send, 1);
    }
    if (!dense_out)
      recv = scratch + (size_t)count * size;
  }
  int error = 0;
  intptr_t type = pdg_world.types[element];
  if (!pdg_world.allreduce) { /* a world of one: every rank's point is ours */
    memmove(recv, send, (size_t)out_count * size);
  } else if (op == PDG_BROADCAST) {
    memmove(recv, send, (size_t)count * size);
    error = pdg_world.bcast(recv, (int)count, type, (int)root, pdg_world.comm);
  } else if (op == PDG_ALL_GATHER) {
    error = pdg_world.allgather(send, (int)count, type, recv, (int)count, type, pdg_world.comm);
  } else if (op == PDG_REDUCE_SCATTER_SUM || op == PDG_REDUCE_SCATTER_MAX) {
    error = pdg_world.reduce_scatter(send, recv, (int)out_count, type,
                                     pdg_world.ops[op - PDG_REDUCE_SCATTER_SUM], pdg_world.comm);
  } else if (op == PDG_SHIFT) {
    /* Room for either library's MPI_Status (Open MPI's and MPICH's are a
       few ints): MPICH's MPI_STATUS_IGNORE is not a null pointer. */
    int64_t status[16];
    int to = (int)pdg_ring(pdg_world.rank + root, pdg_world.size);
    int from = (int)pdg_ring(pdg_world.rank - root, pdg_world.size);
    int tag = (int)(site % 32768); /* MPI guarantees tags up to 32767 */
    error = pdg_world.sendrecv(send, (int)count, type, to, tag, recv, (int)count, type, from, tag,
                               pdg_world.comm, status);
  } else {
    error = pdg_world.allreduce(send, recv, (int)count, type, pdg_world.ops[op], pdg_world.comm);
  }
  if (!error && !dense_out)
    pdg_copy_strided(rank, out, size, recv, 0);
  free(scratch);
  __atomic_add_fetch(&pdg_collective_calls, 1, __ATOMIC_RELAXED);
  if (error)
    pdg_collective_fault(site, error, -1);
}

/* The entry points, one per rank of the result's point, and for an
   all-gather and a reduce-scatter (whose input has one dim less, or more)
   entry points of their own; MLIR's C interface passes each memref as a
   pointer to its descriptor. */
#define PDG_COLLECTIVE_ENTRY(KIND, R)                                                           \
  PDG_EXPORT void _mlir_ciface_pdg_##KIND##_##R(pdg_descriptor_t *in, pdg_descriptor_t *out,    \
                                               int32_t op, int32_t element, int64_t root,      \
                                               int64_t site) {                                 \
    pdg_collective(R, in, out, op, element, root, site);                                       \
  }
PDG_COLLECTIVE_ENTRY(collective, 0)
PDG_COLLECTIVE_ENTRY(collective, 1)
PDG_COLLECTIVE_ENTRY(collective, 2)
PDG_COLLECTIVE_ENTRY(collective, 3)
PDG_COLLECTIVE_ENTRY(collective, 4)
PDG_COLLECTIVE_ENTRY(collective, 5)
PDG_COLLECTIVE_ENTRY(collective, 6)
PDG_COLLECTIVE_ENTRY(collective, 7)
PDG_COLLECTIVE_ENTRY(collective, 8)
PDG_COLLECTIVE_ENTRY(collective_gather, 1)
PDG_COLLECTIVE_ENTRY(collective_gather, 2)
PDG_COLLECTIVE_ENTRY(collective_gather, 3)
PDG_COLLECTIVE_ENTRY(collective_gather, 4)
PDG_COLLECTIVE_ENTRY(collective_gather, 5)
PDG_COLLECTIVE_ENTRY(collective_gather, 6)
PDG_COLLECTIVE_ENTRY(collective_gather, 7)
PDG_COLLECTIVE_ENTRY(collective_gather, 8)
PDG_COLLECTIVE_ENTRY(collective_scatter, 0)
PDG_COLLECTIVE_ENTRY(collective_scatter, 1)
PDG_COLLECTIVE_ENTRY(collective_scatter, 2)
PDG_COLLECTIVE_ENTRY(collective_scatter, 3)
PDG_COLLECTIVE_ENTRY(collective_scatter, 4)
PDG_COLLECTIVE_ENTRY(collective_scatter, 5)
PDG_COLLECTIVE_ENTRY(collective_scatter, 6)
PDG_COLLECTIVE_ENTRY(collective_scatter, 7)
