/* dist_internal.h — what the parts of parity_dist share: the communicator state, the bounded
 * request sets, tensor signatures, the all-reduce state machine (dist.c) that the collectives and
 * the gradient buckets (buckets.c) both drive, and the error and clock helpers. */
#ifndef PARITY_DIST_INTERNAL_H
#define PARITY_DIST_INTERNAL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "host_sum.h"
#include "parity/dist.h"

enum { TAG_SIG = 11, TAG_SIGDESC = 12, TAG_BCAST = 13, TAG_P1 = 14, TAG_P2 = 15, TAG_BARRIER = 16, TAG_BUCKET0 = 100 };
enum { KIND_BARRIER = 1, KIND_BCAST = 2, KIND_ALLREDUCE = 3, KIND_BUCKETS = 4 };

#define MAX_DIMS 8
struct parity_dist_t {
  MPI_Comm comm;
  int rank, size, owns_mpi, abort_on_fault;
  double timeout_s;
  uint64_t seq; /* collective calls made so far */
  /* reused between calls: fresh large allocations would page-fault on every call */
  char *stage, *slots;
  uint64_t stage_cap, slots_cap;
};

typedef struct reqset_t {
  MPI_Request *req;
  int *peer; /* the rank at the other end */
  int *is_recv;
  int n, cap;
} reqset_t;

typedef struct desc_t {
  int32_t dtype, rank;
  int64_t dims[MAX_DIMS];
} desc_t;

typedef struct ar_t {
  parity_dtype_t dt;
  size_t es;
  uint64_t count;
  char *buf;   /* count elements: input, then the result */
  char *slots; /* size * my-chunk elements: phase-1 contributions (kept between calls) */
  uint64_t slots_cap;
  int tag1, tag2, phase; /* phase 0 idle, 1 scatter in flight, 2 gather in flight, 3 done */
  parity_dist_op_t op;
  reqset_t rs;
  char what[96];
} ar_t;

/* Sets the thread's parity_dist_last_error() message; returns st. */
parity_status_t dist_fail(parity_status_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double dist_now_s(void);
/* Bounded waiting: yield the CPU a little while requests are in flight since `started`; and the
 * time-out failure naming the peers of s still pending. */
void dist_relax(double started);
parity_status_t dist_timed_out(parity_dist_t *d, reqset_t *s, const char *what);
/* Every tensor's dtype and shape (*out: n entries, the caller frees), refusing bad tensors. */
parity_status_t dist_describe_all(parity_tensor_t *const *ts, uint32_t n, desc_t **out, const char *what);
/* Every rank checks that all of them make the same call (kind, root, op, extra) on tensors of
 * the same descriptors before any data moves; a mismatch names both sides. */
parity_status_t dist_check_signature(parity_dist_t *d, int kind, int root, int op, const desc_t *descs, uint32_t n,
                                     uint32_t extra);
/* The all-reduce of a->buf: start, advance without blocking (*busy: still in flight), release. */
parity_status_t dist_ar_start(parity_dist_t *d, ar_t *a);
parity_status_t dist_ar_progress(parity_dist_t *d, ar_t *a, int *busy);
void dist_ar_free(ar_t *a);

#endif
