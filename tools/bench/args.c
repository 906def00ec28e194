/* args.c — parity-bench's command line (args.h). */
#define _POSIX_C_SOURCE 200809L
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: parity-bench [--backend NAME|all]... [--section LIST] [--scaling] [--prepared] [--train]\n"
    "                    [--op NAME] [--threads N] [--json FILE|-] [--compare BASELINE.json] [--tolerance PCT]\n"
    "                    [--reps N] [--log2n N] [--sizes LO:HI[:STEP]] [--train-steps N] [--quick] [--no-torch]\n"
    "  f32 figures of parity beside references measured in the same run (ratio > 1: parity faster):\n"
    "  kernels   add, exp, tanh, gelu, sum, rowsum, colsum, max, argmax (GB/s, 2^log2n elements, default 24), softmax and log_softmax\n"
    "            512x32000 (GB/s), matmul 1024^3, conv2d 8x64x56x56 3x3 forward and forward+backward\n"
    "            (GFLOP/s); references: C read / STREAM-add loops, OpenBLAS sgemm, PyTorch\n"
    "  scaling   sum (eager, and replayed from a plan: sum-replayed), max, argmax and add at 2^LO ... 2^HI\n"
    "            elements (default 10:26) beside a vectorised read loop of 64-byte-aligned arrays, a STREAM\n"
    "            add and triad of the same size, and torch\n"
    "  prepared  the Dense(2,2) gradient eager and as a replayed plan, a 2-element add per op, and\n"
    "            a training step of parity-train's MLP eager and replayed (us)\n"
    "  train     images/s of training the Fashion-MNIST CNN, batch 64 (--train-steps N, default 50)\n"
    "  Default sections: kernels,scaling,prepared (--train adds train). Default backend: the one\n"
    "  PARITY_BACKEND selects (auto: a GPU, else cpu); --backend all: every loaded one.\n"
    "  --threads N   the CPU plugin and the references on N threads (OMP_NUM_THREADS, set by re-exec)\n"
    "  --json FILE   machine-readable results ('-': stdout, the table then goes to stderr)\n"
    "  --compare F   compare with a saved --json file: ratio-to-reference change per figure (absolute\n"
    "                change where a figure has no common reference); exit 3 when one is worse than\n"
    "                --tolerance (percent, default 10), or than its own repetitions' spread (up to 50 %)\n"
    "  --op NAME     only figures of that name (conv2d: both conv2d figures; prepared, train: that section)\n"
    "  --quick       tiny shapes and short timings (a smoke run; the figures mean little)\n"
    "  --no-torch    skip the PyTorch references (PARITY_BENCH_PYTHON names the interpreter)\n"
    "  exit: 0 ran, 1 a backend failed, 2 bad usage, 3 --compare flagged a regression\n";

static int bad(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "parity-bench: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, " (see parity-bench --help)\n");
  return 2;
}

/* A whole decimal integer in [lo, hi], or a message and 2. */
static int parse_int(const char *flag, const char *v, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi) {
    fprintf(stderr, "parity-bench: %s takes an integer from %ld to %ld, not '%s'\n", flag, lo, hi, v);
    return 2;
  }
  *out = x;
  return 0;
}

static int parse_sections(const char *v, unsigned *out) {
  static const char *names[] = {"kernels", "scaling", "prepared", "train"};
  unsigned s = 0;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", v);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (unsigned k = 0; k < 4; k++)
      if (!strcmp(t, names[k])) s |= 1u << k, found = 1;
    if (!found) return bad("unknown section '%s'; known: kernels, scaling, prepared, train%s", t, "");
  }
  if (!s) return bad("--section needs a list of sections, not '%s'%s", v, "");
  *out = s;
  return 0;
}

static int parse_sizes(const char *v, bench_options *o) {
  long x[3] = {0, 0, 1};
  int n = 0;
  const char *p = v;
  while (n < 3) {
    char *end;
    errno = 0;
    x[n++] = strtol(p, &end, 10);
    if (errno || end == p) goto bad;
    if (!*end) break;
    if (*end != ':') goto bad;
    p = end + 1;
  }
  if (n < 2 || x[0] < 10 || x[1] > 30 || x[0] > x[1] || x[2] < 1 || x[2] > 20) goto bad;
  o->lo = (int)x[0];
  o->hi = (int)x[1];
  o->step = (int)x[2];
  return 0;
bad:
  return bad("--sizes takes LO:HI or LO:HI:STEP, powers of two with 10 <= LO <= HI <= 30, not '%s'%s", v, "");
}

int bench_parse_args(int argc, char **argv, bench_options *o) {
  *o = (bench_options){.reps = 5,
                       .log2n = 24,
                       .lo = 10,
                       .hi = 26,
                       .step = 1,
                       .train_steps = 50,
                       .tolerance = 0.10,
                       .torch = 1,
                       .min_rep_s = 0.02};
  unsigned chosen = 0, added = 0;
  int sizes_given = 0, reps_given = 0, log2n_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long x;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return 1;
    }
    if (!strcmp(a, "--scaling"))
      added |= SEC_SCALING;
    else if (!strcmp(a, "--prepared"))
      added |= SEC_PREPARED;
    else if (!strcmp(a, "--train"))
      added |= SEC_TRAIN;
    else if (!strcmp(a, "--quick"))
      o->quick = 1;
    else if (!strcmp(a, "--no-torch"))
      o->torch = 0;
    else if (!v &&
             (!strcmp(a, "--backend") || !strcmp(a, "--op") || !strcmp(a, "--reps") || !strcmp(a, "--log2n") ||
              !strcmp(a, "--sizes") || !strcmp(a, "--section") || !strcmp(a, "--train-steps") ||
              !strcmp(a, "--threads") || !strcmp(a, "--json") || !strcmp(a, "--compare") || !strcmp(a, "--tolerance")))
      return bad("%s needs a value%s", a, "");
    else if (!strcmp(a, "--backend")) {
      if (o->nb == 8) return bad("at most 8 --backend options, not more (at '%s')%s", v, "");
      o->backends[o->nb++] = v, i++;
    } else if (!strcmp(a, "--op")) {
      static const char *ops[] = {"add",    "exp",    "tanh",       "gelu",           "sum",      "sum-replayed",
                                  "rowsum", "colsum", "max",        "argmax",         "softmax",  "log_softmax",
                                  "matmul", "conv2d", "conv2d-fwd", "conv2d-fwd-bwd", "prepared", "train"};
      int known = 0;
      for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) known |= !strcmp(v, ops[k]);
      if (!known)
        return bad(
            "unknown op '%s'; known: add exp tanh gelu sum (with sum-replayed) sum-replayed rowsum colsum max argmax softmax log_softmax matmul conv2d (both), conv2d-fwd "
            "conv2d-fwd-bwd prepared train%s",
            v, "");
      o->only = v, i++;
    } else if (!strcmp(a, "--reps")) {
      if (parse_int(a, v, 1, 64, &x)) return 2;
      o->reps = (int)x, i++, reps_given = 1;
    } else if (!strcmp(a, "--log2n")) {
      if (parse_int(a, v, 10, 30, &x)) return 2;
      o->log2n = (int)x, i++, log2n_given = 1;
    } else if (!strcmp(a, "--train-steps")) {
      if (parse_int(a, v, 1, 100000, &x)) return 2;
      o->train_steps = x, i++, added |= SEC_TRAIN;
    } else if (!strcmp(a, "--threads")) {
      if (parse_int(a, v, 1, 1024, &x)) return 2;
      o->threads = (int)x, i++;
    } else if (!strcmp(a, "--sizes")) {
      if (parse_sizes(v, o)) return 2;
      i++, sizes_given = 1;
    } else if (!strcmp(a, "--section")) {
      unsigned s = 0;
      if (parse_sections(v, &s)) return 2;
      chosen |= s, i++;
    } else if (!strcmp(a, "--json"))
      o->json_path = v, i++;
    else if (!strcmp(a, "--compare"))
      o->compare_path = v, i++;
    else if (!strcmp(a, "--tolerance")) {
      char *end;
      errno = 0;
      double t = strtod(v, &end);
      if (end != v && *end == '%') end++;
      if (errno || end == v || *end || !isfinite(t) || t < 0 || t > 1000)
        return bad("--tolerance takes a percentage from 0 to 1000 (e.g. 10 or 10%%), not '%s'%s", v, "");
      o->tolerance = t / 100, i++;
    } else {
      return bad("unknown option '%s'%s", a, "");
    }
  }
  o->sections = (chosen ? chosen : SEC_KERNELS | SEC_SCALING | SEC_PREPARED) | added;
  if (o->only && !strcmp(o->only, "train")) o->sections = SEC_TRAIN;
  if (o->only && !strcmp(o->only, "prepared")) o->sections = SEC_PREPARED;
  if (o->quick) {
    if (!reps_given) o->reps = 3;
    if (!log2n_given) o->log2n = 12;
    if (!sizes_given) o->lo = 10, o->hi = 12;
    o->min_rep_s = 0.001;
    if (o->train_steps > 2) o->train_steps = 2;
  }
  return 0;
}
