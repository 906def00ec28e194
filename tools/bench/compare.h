/* compare.h — --compare: this run's figures against a saved --json file. A figure is matched by
 * section, name, backend, dtype, shape and threads. When both runs measured the same primary
 * reference, the change is that of the ratio to it (new ratio / baseline ratio), which cancels
 * most of a noisy machine; otherwise it is the change of the figure itself (new / baseline,
 * inverted for figures in us). A change below 1 - tolerance is a regression, except that a figure
 * whose repetitions spread more than the tolerance (in either run) is allowed its spread, up to
 * 50 %: a change within its own noise is printed as "worse, within its noise" and not counted. */
#ifndef PARITY_BENCH_COMPARE_H
#define PARITY_BENCH_COMPARE_H

#include <stdio.h>

#include "figures.h"
#include "json.h"

/* Read and check a baseline; NULL with a message on stderr (unreadable, not JSON, not a
 * parity-bench file). */
json *bench_baseline_load(const char *path);
/* Print the comparison; the number of regressions, or -1 when no figure matched (message). */
int bench_compare(FILE *out, const json *baseline, const bench_results *r, double tolerance);

#endif
