/* threads_train.h — several threads, each with its own context, train at once; the result must be
 * bitwise the same as one thread alone. Shared by tests/core/test_threads.c (Criterion) and
 * tests/core/threads_check.c (a plain program: the ThreadSanitizer job of tools/ci-extra.sh runs it,
 * since Criterion's runner does not start under ThreadSanitizer). */
#ifndef PARITY_THREADS_TRAIN_H
#define PARITY_THREADS_TRAIN_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity.h"

#define THREADS 4
#define STEPS 8

typedef struct {
  double loss[STEPS];
  int ok;
  char err[256];
} run_t;

#define TRY(expr)                                                            \
  do {                                                                       \
    if ((expr) != PARITY_STATUS_OK) {                                        \
      snprintf(r->err, sizeof r->err, "%s: %s", #expr, parity_last_error()); \
      goto done;                                                             \
    }                                                                        \
  } while (0)

/* Linear(6,16) -> tanh -> Linear(16,2), MSE, Adam; everything from the counter-based generator. */
static void *train(void *arg) {
  run_t *r = arg;
  parity_context_options_t o;
  parity_context_options_init(&o);
  const char *be = getenv("THREADS_BACKEND");
  o.backend = be && *be ? be : "cpu";
  o.log_level = 0;
  parity_context_t *ctx = NULL;
  parity_device_t *dev;
  parity_tensor_t *x = NULL, *y = NULL, *p[4] = {0};
  parity_optimizer_t *opt = NULL;
  TRY(parity_context_create(&o, &ctx));
  TRY(parity_context_default_device(ctx, &dev));
  TRY(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 6}, 0, 1, 7, 0, &x));
  TRY(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 2}, 0, 1, 7, 1ull << 32, &y));
  const int64_t shapes[4][2] = {{16, 6}, {16, 0}, {2, 16}, {2, 0}};
  for (int i = 0; i < 4; i++) {
    TRY(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, shapes[i][1] ? 2 : 1, shapes[i], 0, 0.3, 7,
                                  (uint64_t)(i + 2) << 32, &p[i]));
    TRY(parity_tensor_set_requires_grad(p[i], 1));
  }
  TRY(parity_adam_create(p, 4, 0.01, 0.9, 0.999, 1e-8, &opt));
  for (int s = 0; s < STEPS; s++) {
    parity_tensor_t *t[4] = {0};
    parity_optimizer_zero_grad(opt);
    parity_status_t st = parity_linear(x, p[0], p[1], &t[0]);
    if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_TANH, t[0], &t[1]);
    if (st == PARITY_STATUS_OK) st = parity_linear(t[1], p[2], p[3], &t[2]);
    if (st == PARITY_STATUS_OK) st = parity_mse_loss(t[2], y, &t[3]);
    if (st == PARITY_STATUS_OK) st = parity_backward(t[3], NULL, 0);
    if (st == PARITY_STATUS_OK) st = parity_optimizer_step(opt);
    if (st == PARITY_STATUS_OK) st = parity_tensor_to_f64(t[3], &r->loss[s], 1);
    for (int i = 0; i < 4; i++) parity_tensor_release(t[i]);
    TRY(st);
  }
  r->ok = 1;
done:
  parity_optimizer_destroy(opt);
  for (int i = 0; i < 4; i++) parity_tensor_release(p[i]);
  parity_tensor_release(x);
  parity_tensor_release(y);
  parity_context_destroy(ctx);
  return NULL;
}

/* Train once alone, then THREADS times at once; 0 when every run succeeded and matched, else -1
 * with a message in err. */
static int threads_train_check(char *err, size_t n) {
  static run_t alone, runs[THREADS];
  memset(&alone, 0, sizeof alone);
  memset(runs, 0, sizeof runs);
  train(&alone);
  if (!alone.ok) return snprintf(err, n, "alone: %s", alone.err), -1;
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    if (pthread_create(&th[i], NULL, train, &runs[i]) != 0) return snprintf(err, n, "pthread_create failed"), -1;
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < THREADS; i++) {
    if (!runs[i].ok) return snprintf(err, n, "thread %d: %s", i, runs[i].err), -1;
    if (memcmp(runs[i].loss, alone.loss, sizeof alone.loss) != 0)
      return snprintf(err, n, "thread %d's losses differ from one thread alone", i), -1;
  }
  if (!(alone.loss[STEPS - 1] < alone.loss[0])) return snprintf(err, n, "the loss did not go down"), -1;
  return 0;
}

#endif
