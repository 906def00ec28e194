/* first_gradient.c — a measuring program, not a test: the time a fresh process takes to reach
 * its first gradient of a small MLP (64x32 -> 64 tanh -> 10, log_softmax, NLL-like loss) on the
 * selected backend, and the per-launch time of a small add (2^10 f32) afterwards.
 *   PARITY_BACKEND=opencl PARITY_CACHE_DIR=$(mktemp -d) POCL_KERNEL_CACHE=0 build/tests/ocl_first_gradient
 * Prints: open ms, first gradient ms (after open), total ms since main and the process's CPU
 * time by then (all threads: steadier than wall time on a shared machine), us per small add,
 * wall and the process's CPU (the host thread and the driver's worker threads together), timed
 * after 300 untimed adds: by then the add runs its optimised program (the tiered compile,
 * plugins/opencl/README.md), so the figure is the steady launch cost. */
#define _POSIX_C_SOURCE 200809L
#include <parity/parity.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_ms(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-3;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

#define CK(x)                                                                          \
  do {                                                                                 \
    if ((x) != PARITY_STATUS_OK) {                                                     \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, parity_last_error()); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(int argc, char **argv) {
  int adds = argc > 1 ? atoi(argv[1]) : 20000;
  double t0 = now_ms();
  parity_context_t *ctx;
  parity_device_t *dev;
  CK(parity_context_create(NULL, &ctx));
  CK(parity_context_default_device(ctx, &dev));
  double t1 = now_ms();
  parity_tensor_t *x, *w1, *b1, *w2, *b2, *h, *hb, *a, *o, *ob, *ls, *loss;
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){64, 32}, 0, 1, 1, 0, &x));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){32, 64}, 0, 0.2, 2, 0, &w1));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){64}, 0, 0.1, 3, 0, &b1));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){64, 10}, 0, 0.2, 4, 0, &w2));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){10}, 0, 0.1, 5, 0, &b2));
  parity_tensor_t *params[] = {w1, b1, w2, b2};
  for (int i = 0; i < 4; i++) CK(parity_tensor_set_requires_grad(params[i], 1));
  CK(parity_matmul(x, w1, &h));
  CK(parity_binary(PARITY_OP_ADD, h, b1, &hb));
  CK(parity_unary(PARITY_OP_TANH, hb, &a));
  CK(parity_matmul(a, w2, &o));
  CK(parity_binary(PARITY_OP_ADD, o, b2, &ob));
  CK(parity_softmax(PARITY_OP_LOG_SOFTMAX, ob, 1, &ls));
  CK(parity_reduce(PARITY_OP_MEAN, ls, 3, 0, &loss));
  CK(parity_backward(loss, NULL, 0));
  float g[32 * 64];
  CK(parity_tensor_to_host(parity_tensor_grad(w1), g, sizeof g));
  double t2 = now_ms(), c2 = cpu_ms();
  /* small op launch time: 2^10 f32 adds, queued back to back, one sync at the end */
  parity_tensor_t *p, *q, *r;
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1024}, 0, 1, 6, 0, &p));
  CK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1024}, 0, 1, 7, 0, &q));
  for (int i = 0; i < 300; i++) {
    CK(parity_binary(PARITY_OP_ADD, p, q, &r));
    parity_tensor_release(r);
  }
  CK(parity_device_synchronize(dev));
  double t3 = now_ms(), c3 = cpu_ms();
  for (int i = 0; i < adds; i++) {
    CK(parity_binary(PARITY_OP_ADD, p, q, &r));
    parity_tensor_release(r);
  }
  CK(parity_device_synchronize(dev));
  double t4 = now_ms(), c4 = cpu_ms();
  printf(
      "open %.1f ms, first gradient %.1f ms, total %.1f ms (CPU %.0f ms), small add %.2f us/op (CPU %.2f us/op) "
      "(g[0] %.6g)\n",
      t1 - t0, t2 - t1, t2 - t0, c2, adds ? (t4 - t3) * 1e3 / adds : 0.0, adds ? (c4 - c3) * 1e3 / adds : 0.0,
      (double)g[0]);
  parity_tensor_t *all[] = {x, w1, b1, w2, b2, h, hb, a, o, ob, ls, loss, p, q};
  for (int i = 0; i < 14; i++) parity_tensor_release(all[i]);
  parity_context_destroy(ctx);
  return 0;
}
