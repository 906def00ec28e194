/* bench_prepared.c — parity-bench's prepared-step figures (issue: prepared steps must become
 * cheap): the gradient of a Dense(2,2) layer (sum(x W^T + b), W and b requiring grad) computed
 * eagerly and as a replayed plan with a new x written before every replay, and the per-op cost of
 * a 2-element add, beside the same Dense(2,2) gradient written as a plain C loop on the host (the
 * floor). Medians of several runs of N iterations, in microseconds per iteration. */
#define _POSIX_C_SOURCE 200809L
#include "bench_prepared.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { RUNS = 7, ITERS = 2000 };
typedef struct dense {
  parity_tensor_t *x, *w, *b;
} dense;

/* one eager gradient: zero grads, forward, sum, backward */
static int eager_grad(dense *d) {
  parity_tensor_zero_grad(d->w);
  parity_tensor_zero_grad(d->b);
  parity_tensor_t *y = NULL, *s = NULL;
  int ok = parity_linear(d->x, d->w, d->b, &y) == PARITY_STATUS_OK &&
           parity_reduce(PARITY_OP_SUM, y, 3, 0, &s) == PARITY_STATUS_OK && parity_backward(s, NULL, 0) == PARITY_STATUS_OK;
  parity_tensor_release(y);
  parity_tensor_release(s);
  return ok;
}

static double median(double *t) {
  qsort(t, RUNS, sizeof *t, cmp);
  return t[RUNS / 2];
}

int bench_prepared(parity_device_t *dev) {
  dense d = {0};
  float xv[2] = {0.5f, -1.5f};
  int ok = parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){1, 2}, xv, &d.x) == PARITY_STATUS_OK &&
           parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){2, 2}, 0, 1, 1, 0, &d.w) == PARITY_STATUS_OK &&
           parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, 0, 1, 1, 1ull << 32, &d.b) == PARITY_STATUS_OK &&
           parity_tensor_set_requires_grad(d.w, 1) == PARITY_STATUS_OK &&
           parity_tensor_set_requires_grad(d.b, 1) == PARITY_STATUS_OK;
  double eager[RUNS], replay[RUNS], add[RUNS], host[RUNS];
  parity_plan_t *plan = NULL;
  for (int r = 0; r < RUNS && ok; r++) { /* eager gradient */
    double t0 = now_us();
    for (int i = 0; i < ITERS && ok; i++) {
      xv[0] = (float)i;
      ok = parity_tensor_write(d.x, xv, sizeof xv) == PARITY_STATUS_OK && eager_grad(&d);
    }
    ok = ok && parity_device_synchronize(dev) == PARITY_STATUS_OK;
    eager[r] = (now_us() - t0) / ITERS;
  }
  ok = ok && parity_plan_begin(dev, &plan) == PARITY_STATUS_OK && eager_grad(&d) &&
       parity_plan_end(plan) == PARITY_STATUS_OK;
  for (int r = 0; r < RUNS && ok; r++) { /* the same gradient, prepared: write x, replay */
    double t0 = now_us();
    for (int i = 0; i < ITERS && ok; i++) {
      xv[0] = (float)i;
      ok = parity_tensor_write(d.x, xv, sizeof xv) == PARITY_STATUS_OK && parity_plan_replay(plan) == PARITY_STATUS_OK;
    }
    ok = ok && parity_device_synchronize(dev) == PARITY_STATUS_OK;
    replay[r] = (now_us() - t0) / ITERS;
  }
  for (int r = 0; r < RUNS && ok; r++) { /* one 2-element add, eager, result released */
    double t0 = now_us();
    for (int i = 0; i < ITERS && ok; i++) {
      parity_tensor_t *y = NULL;
      ok = parity_binary(PARITY_OP_ADD, d.b, d.b, &y) == PARITY_STATUS_OK;
      parity_tensor_release(y);
    }
    ok = ok && parity_device_synchronize(dev) == PARITY_STATUS_OK;
    add[r] = (now_us() - t0) / ITERS;
  }
  volatile float sink = 0;
  for (int r = 0; r < RUNS; r++) { /* the floor: the same gradient as a C loop */
    float w[4] = {0.1f, 0.2f, 0.3f, 0.4f}, gw[4], gb[2];
    double t0 = now_us();
    for (int i = 0; i < ITERS; i++) {
      float x0 = (float)i, x1 = -1.5f;
      for (int o = 0; o < 2; o++) {
        gw[2 * o] = x0;
        gw[2 * o + 1] = x1;
        gb[o] = 1;
      }
      sink += gw[0] * w[0] + gw[3] * w[3] + gb[1];
    }
    host[r] = (now_us() - t0) / ITERS;
  }
  if (ok)
    printf("  prepared   Dense(2,2) gradient: eager %.2f us, replayed %.2f us (new x each time); 2-element add "
           "%.2f us per op; host C loop %.4f us\n", median(eager), median(replay), median(add), median(host));
  else
    printf("  prepared   failed: %s\n", parity_last_error());
  parity_plan_destroy(plan);
  parity_tensor_release(d.x);
  parity_tensor_release(d.w);
  parity_tensor_release(d.b);
  return ok;
}
