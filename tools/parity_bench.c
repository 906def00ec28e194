/* parity-bench — throughput of the kernel families on each backend. Memory-bound ops report
 * GB/s (bytes read + written), compute-bound ops GFLOP/s. Each figure is the median of --reps
 * timed runs after one warm-up run, measured around a device synchronize. With --train, also
 * the training figure: images per second of the Fashion-MNIST CNN (tools/train/models.c), batch
 * 64, SGD with momentum, on generated images (the dataset is not needed). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models.h"
#include "bench_prepared.h"
#include "parity/parity.h"

typedef parity_status_t (*bench_fn)(parity_tensor_t **in, parity_tensor_t **out);

static parity_status_t b_add(parity_tensor_t **in, parity_tensor_t **out) { return parity_binary(PARITY_OP_ADD, in[0], in[1], out); }
static parity_status_t b_exp(parity_tensor_t **in, parity_tensor_t **out) { return parity_unary(PARITY_OP_EXP, in[0], out); }
static parity_status_t b_sum(parity_tensor_t **in, parity_tensor_t **out) { return parity_reduce(PARITY_OP_SUM, in[0], 0, 0, out); }
static parity_status_t b_rowsum(parity_tensor_t **in, parity_tensor_t **out) { return parity_reduce(PARITY_OP_SUM, in[0], 2, 0, out); }
static parity_status_t b_softmax(parity_tensor_t **in, parity_tensor_t **out) { return parity_softmax(PARITY_OP_SOFTMAX, in[0], 1, out); }
static parity_status_t b_matmul(parity_tensor_t **in, parity_tensor_t **out) { return parity_matmul(in[0], in[1], out); }
static parity_status_t b_conv(parity_tensor_t **in, parity_tensor_t **out) {
  parity_conv2d_options_t o = {.stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};
  return parity_conv2d(in[0], in[1], NULL, &o, out);
}

typedef struct bench {
  const char *name;
  bench_fn fn;
  uint32_t nin;
  uint32_t rank[2];
  int64_t shape[2][4];
  double work; /* bytes moved (memory-bound) or flops (compute-bound), per run */
  int flops;
} bench;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int run(parity_device_t *dev, const bench *b, int reps, parity_dtype_t dt) {
  parity_tensor_t *in[2] = {0};
  for (uint32_t i = 0; i < b->nin; i++)
    if (parity_tensor_rand_uniform(dev, dt, b->rank[i], b->shape[i], -1, 1, 5, (uint64_t)i << 40, &in[i]) !=
        PARITY_STATUS_OK) {
      printf("  %-10s  skipped: %s\n", b->name, parity_last_error());
      for (uint32_t k = 0; k < i; k++) parity_tensor_release(in[k]);
      return 0;
    }
  double times[64];
  int ok = 1;
  for (int r = -1; r < reps && ok; r++) {
    parity_tensor_t *out = NULL;
    parity_device_synchronize(dev);
    double t0 = now_s();
    if (b->fn(in, &out) != PARITY_STATUS_OK || parity_device_synchronize(dev) != PARITY_STATUS_OK) {
      printf("  %-10s  unsupported: %s\n", b->name, parity_last_error());
      ok = 0;
    } else if (r >= 0) {
      times[r] = now_s() - t0;
    }
    parity_tensor_release(out);
  }
  if (ok) {
    qsort(times, (size_t)reps, sizeof *times, cmp);
    double t = times[reps / 2];
    printf("  %-10s %10.3f ms  %9.2f %s\n", b->name, t * 1e3, b->work / t / 1e9, b->flops ? "GFLOP/s" : "GB/s");
  }
  for (uint32_t i = 0; i < b->nin; i++) parity_tensor_release(in[i]);
  return ok;
}

/* A whole decimal integer in [lo, hi], or a message and -1. */
static int parse_int(const char *v, long lo, long hi, int *out, const char *flag) {
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi) {
    fprintf(stderr, "parity-bench: %s takes an integer from %ld to %ld, not '%s'\n", flag, lo, hi, v);
    return -1;
  }
  *out = (int)x;
  return 0;
}

/* Training throughput: 2 warm-up steps, then `steps` timed steps of forward, loss, backward and
 * an SGD update (loss read back each step, as parity-train does). */
static int train_figure(parity_device_t *dev, long steps) {
  enum { BATCH = 64, EPOCH = 60000 };
  model m;
  parity_tensor_t *x = NULL, *y = NULL;
  parity_optimizer_t *opt = NULL;
  float onehot[BATCH * MODEL_CLASSES] = {0};
  for (int b = 0; b < BATCH; b++) onehot[b * MODEL_CLASSES + b % MODEL_CLASSES] = 1;
  model_init(&m, MODEL_CNN, dev, PARITY_DTYPE_F32, 1);
  int ok = parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 4, (int64_t[]){BATCH, 1, 28, 28}, 0, 1, 9, 0, &x) ==
               PARITY_STATUS_OK &&
           parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, MODEL_CLASSES}, onehot, &y) ==
               PARITY_STATUS_OK &&
           parity_sgd_create(m.param, m.count, 0.01, 0.9, &opt) == PARITY_STATUS_OK;
  double t0 = 0, loss = 0;
  for (long s = -2; s < steps && ok; s++) {
    if (s == 0) t0 = now_s();
    ok = model_grad(&m, x, y, 1.0, &loss) == PARITY_STATUS_OK && parity_optimizer_step(opt) == PARITY_STATUS_OK;
  }
  if (ok) ok = parity_device_synchronize(dev) == PARITY_STATUS_OK;
  if (ok) {
    double t = now_s() - t0, ips = (double)(steps * BATCH) / t;
    printf("  %-10s %10.1f images/s  CNN training, %ld steps of %d (one %d-image epoch: %.1f s)\n", "train-cnn", ips,
           steps, BATCH, EPOCH, EPOCH / ips);
  } else {
    printf("  %-10s  unsupported: %s\n", "train-cnn", parity_last_error());
  }
  parity_optimizer_destroy(opt);
  parity_tensor_release(x);
  parity_tensor_release(y);
  model_release(&m);
  return ok;
}

int main(int argc, char **argv) {
  const char *only = NULL, *backends[8];
  int nb = 0, reps = 5, log2n = 24, train = 0, prepared = 0;
  long train_steps = 50;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--backend") && i + 1 < argc && nb < 8) backends[nb++] = argv[++i];
    else if (!strcmp(argv[i], "--train")) train = 1;
    else if (!strcmp(argv[i], "--prepared")) prepared = 1;
    else if (!strcmp(argv[i], "--train-steps") && i + 1 < argc) {
      char *end;
      train = 1;
      train_steps = strtol(argv[++i], &end, 10);
      if (*end || end == argv[i] || train_steps < 1 || train_steps > 100000) {
        fprintf(stderr, "parity-bench: --train-steps needs an integer in 1..100000, not '%s'\n", argv[i]);
        return 2;
      }
    }
    else if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      if (parse_int(argv[++i], 1, 1000000, &reps, "--reps") != 0) return 2;
    } else if (!strcmp(argv[i], "--log2n") && i + 1 < argc) {
      if (parse_int(argv[++i], 1, 30, &log2n, "--log2n") != 0) return 2;
    }
    else {
      fprintf(stderr, "usage: parity-bench [--backend NAME]... [--op NAME] [--reps N] [--log2n N] [--train]"
                      " [--train-steps N] [--prepared]\n"
                      "  f32 throughput of add, exp, sum, rowsum, softmax (GB/s; 2^log2n elements, default 24)\n"
                      "  and matmul, conv2d (GFLOP/s) on every loaded backend, or those named;\n"
                      "  --train: also images/s of training the Fashion-MNIST CNN, batch 64 (--train-steps N timed\n"
                      "  steps, default 50; 938 is one epoch), on generated images; --op train: only that\n"
                      "  --prepared: the Dense(2,2) gradient eager and replayed, a 2-element add, in us (--op prepared)\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (reps < 1 || reps > 64 || log2n < 10 || log2n > 30) {
    fprintf(stderr, "parity-bench: --reps must be 1..64 and --log2n 10..30\n");
    return 2;
  }
  int64_t n = 1ll << log2n, rows = 1 << (log2n / 2), cols = n / rows;
  double e4 = 4.0 * (double)n;
  bench benches[] = {
      {"add", b_add, 2, {1, 1}, {{n}, {n}}, 3 * e4, 0},
      {"exp", b_exp, 1, {1}, {{n}}, 2 * e4, 0},
      {"sum", b_sum, 1, {1}, {{n}}, e4, 0},
      {"rowsum", b_rowsum, 1, {2}, {{rows, cols}}, e4, 0},
      {"softmax", b_softmax, 1, {2}, {{rows, cols}}, 2 * e4, 0},
      {"matmul", b_matmul, 2, {2, 2}, {{512, 512}, {512, 512}}, 2.0 * 512 * 512 * 512, 1},
      {"conv2d", b_conv, 2, {4, 4}, {{8, 64, 32, 32}, {64, 64, 3, 3}}, 2.0 * 8 * 64 * 32 * 32 * 64 * 9, 1},
  };
  parity_context_t *ctx;
  if (parity_context_create(NULL, &ctx) != PARITY_STATUS_OK) {
    fprintf(stderr, "parity-bench: %s\n", parity_last_error());
    return 2;
  }
  int failures = 0;
  for (uint32_t p = 0; p < parity_context_plugin_count(ctx); p++) {
    parity_plugin_record_t rec;
    parity_context_plugin(ctx, p, &rec);
    if (rec.state != PARITY_PLUGIN_STATE_LOADED) continue;
    int wanted = nb == 0;
    for (int k = 0; k < nb; k++) wanted |= !strcmp(backends[k], rec.name) || !strcmp(backends[k], rec.backend);
    if (!wanted) continue;
    parity_device_t *dev;
    if (parity_context_open_device(ctx, p, 0, &dev) != PARITY_STATUS_OK) {
      printf("%s: %s\n", rec.name, parity_last_error());
      failures++;
      continue;
    }
    parity_device_info_t info = {.struct_size = sizeof info};
    parity_device_get_info(dev, &info);
    printf("%s — %s (f32, median of %d)\n", rec.name, info.name, reps);
    for (size_t b = 0; b < sizeof benches / sizeof *benches; b++)
      if (!only || !strcmp(only, benches[b].name)) run(dev, &benches[b], reps, PARITY_DTYPE_F32);
    if (train || (only && !strcmp(only, "train"))) train_figure(dev, train_steps);
    if (prepared || (only && !strcmp(only, "prepared"))) bench_prepared(dev);
  }
  parity_context_destroy(ctx);
  return failures ? 1 : 0;
}
