/* args.h — parity-bench's command line (args.c); every value is checked before any work. */
#ifndef PARITY_BENCH_ARGS_H
#define PARITY_BENCH_ARGS_H

enum { SEC_KERNELS = 1, SEC_SCALING = 2, SEC_PREPARED = 4, SEC_TRAIN = 8 };

typedef struct bench_options {
  const char *backends[8]; /* --backend NAME...; none: the default device; "all": every loaded one */
  int nb;
  const char *only;  /* --op NAME: only figures of that name */
  int reps;          /* timed repetitions per figure (median) */
  int log2n;         /* elements of the kernels section's add, exp, sum, rowsum */
  int lo, hi, step;  /* the scaling curve: 2^lo ... 2^hi elements, every step-th power */
  unsigned sections; /* SEC_* */
  long train_steps;
  int threads;           /* --threads N; 0: whatever OMP_NUM_THREADS / the machine gives */
  const char *json_path; /* --json FILE or "-" */
  const char *compare_path;
  double tolerance; /* --tolerance, a fraction (0.10 = 10 %) */
  int quick;        /* tiny shapes and short timings (for tests) */
  int torch;        /* 0 after --no-torch */
  double min_rep_s; /* each timed repetition runs the op this long at least */
} bench_options;

/* 0: run; 1: --help was printed (exit 0); 2: bad usage, message printed (exit 2). */
int bench_parse_args(int argc, char **argv, bench_options *o);

#endif
