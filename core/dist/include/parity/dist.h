/* dist.h — data-parallel training on MPI (library parity_dist, built where CMake finds MPI).
 *
 * One process per rank, started by mpirun (one machine or several hosts). Every rank holds the
 * whole model; parity_dist_broadcast copies parameters from one rank to all, and
 * parity_dist_allreduce sums (or averages) a list of tensors, typically gradients, across ranks.
 * Tensors may live on any backend: their bytes are staged through host memory (the MPI library
 * never sees device pointers).
 *
 * DETERMINISM (docs/distributed.md)
 *   parity_dist_allreduce never uses MPI_Allreduce. Each element's result is the sum of the ranks'
 *   values combined by one fixed binary tree in rank order: level by level, node r of width 2s
 *   adds node r + s to node r (r a multiple of 2s, r + s < size). Rank c computes that sum for its
 *   c-th chunk of the elements and sends the bits to everyone, so every rank gets bitwise the same
 *   result, and it is a function of the per-rank inputs and the world size only: never of timing,
 *   message sizes, bucket sizes or the MPI implementation. The tree is chosen so that a rank's
 *   contribution may itself be a tree-sum of 2^m consecutive "slices" (parity_dist_tree_sum):
 *   then S slices summed on N ranks (S/N a power of two) give the same bits for every N.
 *   MEAN divides the sum by the world size once (exact when it is a power of two).
 *
 * COLLECTIVES AND FAULTS
 *   Every function below taking a parity_dist_t* is collective: all ranks call it in the same
 *   order with matching arguments. Before moving data each call exchanges a signature (call kind
 *   and sequence number, tensor count, every dtype and shape); a mismatch fails the call on every
 *   rank with PARITY_STATUS_INVALID_ARGUMENT and a message naming the rank and tensor index, and
 *   the ranks stay usable. All waiting is bounded: when a peer does not answer within the timeout
 *   (PARITY_DIST_TIMEOUT seconds, default 60), the message "rank P did not respond within T s"
 *   is printed and the job is aborted with MPI_Abort (exit status 70), or, with abort_on_fault 0,
 *   the call returns PARITY_STATUS_UNAVAILABLE (the communicator is then unusable).
 */
#ifndef PARITY_DIST_H
#define PARITY_DIST_H

#include <stdint.h>

#include "parity/parity.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parity_dist_t parity_dist_t;

typedef enum parity_dist_op_t { PARITY_DIST_SUM = 0, PARITY_DIST_MEAN = 1 } parity_dist_op_t;

typedef struct parity_dist_options_t {
  uint32_t struct_size;   /* sizeof(parity_dist_options_t) */
  double timeout_s;       /* <= 0: PARITY_DIST_TIMEOUT, else 60; seconds in [0.001, 86400], else refused */
  int32_t abort_on_fault; /* < 0: default (1): a peer that does not answer aborts the job */
} parity_dist_options_t;

PARITY_API void parity_dist_options_init(parity_dist_options_t *opts);

/* Initialise MPI (unless the program already did) and the library from the MPI environment
 * (mpirun's). argc/argv may be NULL. opts may be NULL. */
PARITY_API parity_status_t parity_dist_init(int *argc, char ***argv, const parity_dist_options_t *opts,
                                            parity_dist_t **out);
/* Free the context; finalizes MPI when parity_dist_init initialised it. */
PARITY_API void parity_dist_finalize(parity_dist_t *d);
PARITY_API int parity_dist_rank(const parity_dist_t *d);
PARITY_API int parity_dist_size(const parity_dist_t *d);
PARITY_API double parity_dist_timeout(const parity_dist_t *d);
/* The message of this thread's last failure in parity_dist_* ("" if none). */
PARITY_API const char *parity_dist_last_error(void);
/* Print "parity-dist: rank R: msg" and end every rank of the job (MPI_Abort). */
PARITY_API void parity_dist_abort(parity_dist_t *d, int exit_code, const char *msg);

/* Collective: every rank waits for every other (bounded by the timeout). */
PARITY_API parity_status_t parity_dist_barrier(parity_dist_t *d);
/* Collective: overwrite tensors on every rank with root's (any dtype, any backend). */
PARITY_API parity_status_t parity_dist_broadcast(parity_dist_t *d, parity_tensor_t *const *tensors, uint32_t count,
                                                 int root);
/* Collective: replace every tensor by the deterministic sum (or mean) over ranks. The tensors must
 * share one floating dtype (f32, f64, f16, bf16; f16/bf16 add in f32 and round once per add). */
PARITY_API parity_status_t parity_dist_allreduce(parity_dist_t *d, parity_tensor_t *const *tensors, uint32_t count,
                                                 parity_dist_op_t op);
/* Same, on a host buffer of `count` elements. */
PARITY_API parity_status_t parity_dist_allreduce_host(parity_dist_t *d, void *data, uint64_t count,
                                                      parity_dtype_t dtype, parity_dist_op_t op);

/* Not collective: out = the rank-order tree sum (above) of parts[0..n-1], each `count` elements
 * of `dtype`; out may be parts[0]. The same tree the all-reduce applies across ranks. */
PARITY_API parity_status_t parity_dist_tree_sum(parity_dtype_t dtype, uint64_t count, const void *const *parts,
                                                uint32_t n, void *out);

/* ---- bucketed, asynchronous all-reduce of gradients (as PyTorch DDP does) -------------------
 * The parameters' gradients are grouped into buckets of about bucket_bytes in reverse parameter
 * order (the order backward finishes them). parity_dist_buckets_ready(b, i) says parameter i's
 * .grad is final: when a bucket's last parameter is ready, its gradients are staged to the host
 * and its reduction starts (non-blocking), progressing while later buckets are staged and
 * earlier ones written back; parity_dist_buckets_finish waits for all and writes the reduced
 * values into every .grad. Bitwise the same result as parity_dist_allreduce of the gradients.
 * create is collective (checks the parameter list on every rank); ready and finish must be
 * called for the same buckets on every rank. */
typedef struct parity_dist_buckets_t parity_dist_buckets_t;
PARITY_API parity_status_t parity_dist_buckets_create(parity_dist_t *d, parity_tensor_t *const *params, uint32_t count,
                                                      uint64_t bucket_bytes, parity_dist_op_t op,
                                                      parity_dist_buckets_t **out);
PARITY_API parity_status_t parity_dist_buckets_ready(parity_dist_buckets_t *b, uint32_t index);
/* Marks every parameter not yet marked ready, then waits for every bucket. */
PARITY_API parity_status_t parity_dist_buckets_finish(parity_dist_buckets_t *b);
PARITY_API uint32_t parity_dist_buckets_count(const parity_dist_buckets_t *b);
PARITY_API void parity_dist_buckets_destroy(parity_dist_buckets_t *b);

#ifdef __cplusplus
}
#endif
#endif /* PARITY_DIST_H */
