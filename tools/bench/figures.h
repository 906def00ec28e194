/* figures.h — parity-bench's results: one record per measured figure, each with the references
 * measured in the same run, printed as a table and written as JSON (docs/benchmarks.md). */
#ifndef PARITY_BENCH_FIGURES_H
#define PARITY_BENCH_FIGURES_H

#include <stddef.h>

enum { BENCH_MAX_REFS = 4 };

typedef struct bench_ref {
  char name[40]; /* "read loop", "OpenBLAS sgemm", "torch.sum" */
  double value;  /* same unit as the figure; 0 when unavailable */
  int available;
  char note[120]; /* why unavailable */
} bench_ref;

typedef struct bench_figure {
  char section[16]; /* kernels, scaling, prepared, train */
  char name[32];    /* add, sum, matmul, conv2d-fwd-bwd, dense22-replayed, ... */
  char backend[32];
  char dtype[8];
  char shape[64]; /* "16777216", "1024x1024x1024", "8x64x56x56 * 64x64x3x3" */
  double size;    /* elements of the main operand (for sorting and plotting) */
  int threads;
  double value;
  const char *unit; /* GB/s, GFLOP/s, images/s (higher is better) or us (lower is better) */
  int lower_better;
  double work;   /* bytes or flops per run: references timed in seconds become work / s / 1e9 */
  double spread; /* bench_spread (timing.h) of parity's repetitions; 0: not known */
  bench_ref refs[BENCH_MAX_REFS];
  int nrefs;
} bench_figure;

typedef struct bench_results {
  bench_figure *fig;
  size_t n, cap;
} bench_results;

/* A new figure (zeroed refs), or NULL when out of memory. Pointers stay valid until the next add. */
bench_figure *bench_add(bench_results *r, const char *section, const char *name, const char *backend, const char *shape,
                        double size, int threads, double value, const char *unit);
/* Attach a reference with its value, or unavailable with a note. */
void bench_ref_value(bench_figure *f, const char *name, double value);
void bench_ref_missing(bench_figure *f, const char *name, const char *note);
/* The first available reference (the primary one, used for "ratio" and --compare), or NULL. */
const bench_ref *bench_primary(const bench_figure *f);
/* Speed of the figure relative to ref (> 1: parity is faster), for either direction of unit. */
double bench_ratio(const bench_figure *f, const bench_ref *ref);
/* The figure's identity for matching against a baseline: section/name/backend/dtype/shape/threads. */
void bench_key(char *out, size_t n, const char *section, const char *name, const char *backend, const char *dtype,
               const char *shape, int threads);
/* One figure as a table row (flushed, printed as soon as it is measured); a section's column header. */
void bench_print_row(void *file, const bench_figure *f);
void bench_print_header(void *file, const char *section);
void bench_results_free(bench_results *r);

#endif
