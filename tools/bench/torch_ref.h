/* torch_ref.h — PyTorch references: torch_ref.py (beside this file, or installed in share/parity)
 * runs as one python3 subprocess for the whole run, and each torch figure is timed with parity's
 * own, their repetitions interleaved (same timing rule, same thread count), attached as the
 * reference "torch.<op>".
 * python3 is PARITY_BENCH_PYTHON when set, else /usr/bin/python3 (Debian's python3-torch), else
 * python3 on PATH; a missing python3 or torch leaves the references unavailable with the reason,
 * never an error. */
#ifndef PARITY_BENCH_TORCH_REF_H
#define PARITY_BENCH_TORCH_REF_H

#include <stddef.h>
#include <stdint.h>

#include "figures.h"
#include "timing.h"

/* Whether torch references are wanted at all (0 after --no-torch), and their threads and timing;
 * call once before the first torch_ref_job. */
void torch_ref_config(int enabled, int threads, const bench_timing *t);

/* One torch reference, timed beside parity's figure: torch_ref_job has the subprocess make the op
 * and run its warm-up and calibration, and gives a self-timed job (timing.h) whose repetitions
 * bench_time_jobs interleaves with parity's and the C references'; torch_ref_done keeps its time
 * and lets the subprocess drop the op; torch_ref_attach attaches "torch.<op>" to the figure, or
 * why it is missing. */
typedef struct torch_ref {
  long id;
  int prepared;   /* the subprocess holds the op (until torch_ref_done) */
  double seconds; /* torch_ref_done: the median seconds per call, or -1 */
  char name[40];  /* "torch.<op>" */
  char why[400];  /* why there is no figure */
} torch_ref;

/* Prepare torch's op on inputs of shapes a (rank ra) and b (rank rb, 0 for none); op: add exp
 * tanh gelu sum rowsum colsum max argmax softmax log_softmax matmul conv2d-fwd conv2d-fwd-bwd
 * train-cnn. 1 with *job set, 0 when there is no reference (the reason kept in r). */
int torch_ref_job(torch_ref *r, bench_job *job, const char *op, int ra, const int64_t *a, int rb, const int64_t *b);
/* After bench_time_jobs timed `job` (or did not run it): keep its time and let the subprocess drop
 * the op. Safe on a torch_ref whose torch_ref_job returned 0. */
void torch_ref_done(torch_ref *r, const bench_job *job);
/* Attach torch's figure to f (value = f->work / seconds / 1e9), or why it is missing. */
void torch_ref_attach(const torch_ref *r, bench_figure *f);
/* End the subprocess; the torch version and threads, or why it is unavailable. */
const char *torch_ref_finish(void);

#endif
