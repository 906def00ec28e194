/* torch_ref.h — PyTorch references: torch_ref.py (beside this file, or installed in share/parity)
 * runs as one python3 subprocess for the whole run, and each torch figure is measured right after
 * parity's own (same timing rule, same thread count), attached as the reference "torch.<op>".
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
 * call once before the first torch_ref_measure. */
void torch_ref_config(int enabled, int threads, const bench_timing *t);
/* Measure torch's op on inputs of shapes a (rank ra) and b (rank rb, 0 for none) and attach it to
 * f (value = f->work / seconds / 1e9), or attach it as unavailable with the reason. op: add exp sum
 * rowsum colsum max argmax softmax log_softmax matmul conv2d-fwd conv2d-fwd-bwd. */
void torch_ref_measure(bench_figure *f, const char *op, int ra, const int64_t *a, int rb, const int64_t *b);
/* End the subprocess; the torch version and threads, or why it is unavailable. */
const char *torch_ref_finish(void);

#endif
