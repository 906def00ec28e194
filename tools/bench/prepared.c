/* prepared.c — parity-bench's prepared section (issue: prepared steps must become
 * cheap): the gradient of a Dense(2,2) layer (sum(x W^T + b), W and b requiring grad) computed
 * eagerly and as a replayed plan with a new x written before every replay, and the per-op cost of
 * a 2-element add, beside the same Dense(2,2) gradient written as a plain C loop on the host (the
 * floor, the reference of all three figures). On an OpenCL device the per-op figure has a second
 * reference: the same add launched straight through OpenCL (cl_ref.h), what the driver alone
 * costs. Medians of several runs of N iterations, the kinds interleaved run by run, in
 * microseconds per iteration (lower is better). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <string.h>

#include "cl_ref.h"
#include "vk_ref.h"
#include "sections.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { RUNS = 7 };
static volatile float sink; /* keeps the host loop from being optimised away */
static int iters = 2000;
typedef struct dense {
  parity_tensor_t *x, *w, *b;
} dense;

/* one eager gradient: zero grads, forward, sum, backward */
static int eager_grad(dense *d) {
  parity_tensor_zero_grad(d->w);
  parity_tensor_zero_grad(d->b);
  parity_tensor_t *y = NULL, *s = NULL;
  int ok = parity_linear(d->x, d->w, d->b, &y) == PARITY_STATUS_OK &&
           parity_reduce(PARITY_OP_SUM, y, 3, 0, &s) == PARITY_STATUS_OK &&
           parity_backward(s, NULL, 0) == PARITY_STATUS_OK;
  parity_tensor_release(y);
  parity_tensor_release(s);
  return ok;
}

static double median(double *t) {
  qsort(t, RUNS, sizeof *t, cmp);
  return t[RUNS / 2];
}

/* One run of `iters` iterations of kind k (0 eager gradient, 1 replayed, 2 add, 3 host loop, 4 raw
 * OpenCL add); us per iteration, or negative on failure. */
static double one_run(int k, dense *d, parity_plan_t *plan, parity_device_t *dev, cl_ref *cl, vk_ref *vk) {
  float xv[2] = {0.5f, -1.5f};
  int ok = 1;
  double t0 = now_us();
  if (k == 4) return (cl ? cl_ref_run(cl, iters) : vk_ref_run(vk, iters)) == 0 ? (now_us() - t0) / iters : -1;
  if (k == 3) { /* the floor: the same gradient as a C loop, run 100 times longer to span as much time */
    float w[4] = {0.1f, 0.2f, 0.3f, 0.4f}, gw[4], gb[2];
    for (int i = 0; i < 100 * iters; i++) {
      float x0 = (float)i, x1 = -1.5f;
      for (int o = 0; o < 2; o++) {
        gw[2 * o] = x0;
        gw[2 * o + 1] = x1;
        gb[o] = 1;
      }
      sink += gw[0] * w[0] + gw[3] * w[3] + gb[1];
    }
    return (now_us() - t0) / (100.0 * iters);
  }
  for (int i = 0; i < iters && ok; i++) {
    xv[0] = (float)i;
    if (k == 0) ok = parity_tensor_write(d->x, xv, sizeof xv) == PARITY_STATUS_OK && eager_grad(d);
    if (k == 1)
      ok = parity_tensor_write(d->x, xv, sizeof xv) == PARITY_STATUS_OK && parity_plan_replay(plan) == PARITY_STATUS_OK;
    if (k == 2) { /* one 2-element add, eager, result released */
      parity_tensor_t *y = NULL;
      ok = parity_binary(PARITY_OP_ADD, d->b, d->b, &y) == PARITY_STATUS_OK;
      parity_tensor_release(y);
    }
  }
  ok = ok && parity_device_synchronize(dev) == PARITY_STATUS_OK;
  return ok ? (now_us() - t0) / iters : -1;
}

void section_prepared(bench_run *run, parity_device_t *dev, const char *backend) {
  if (!bench_wanted(run, "prepared")) return;
  iters = run->o->quick ? 100 : 2000;
  dense d = {0};
  float xv[2] = {0.5f, -1.5f};
  int ok =
      parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){1, 2}, xv, &d.x) == PARITY_STATUS_OK &&
      parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){2, 2}, 0, 1, 1, 0, &d.w) == PARITY_STATUS_OK &&
      parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, 0, 1, 1, 1ull << 32, &d.b) ==
          PARITY_STATUS_OK &&
      parity_tensor_set_requires_grad(d.w, 1) == PARITY_STATUS_OK &&
      parity_tensor_set_requires_grad(d.b, 1) == PARITY_STATUS_OK;
  double eager[RUNS], replay[RUNS], add[RUNS], host[RUNS], raw[RUNS], *runs[5] = {eager, replay, add, host, raw};
  parity_plan_t *plan = NULL;
  ok = ok && eager_grad(&d) && parity_plan_begin(dev, &plan) == PARITY_STATUS_OK && eager_grad(&d) &&
       parity_plan_end(plan) == PARITY_STATUS_OK;
  char why[256] = "";
  parity_device_info_t info = {.struct_size = sizeof info};
  cl_ref *cl = NULL;
  if (ok && !strcmp(parity_device_backend(dev), "opencl") && parity_device_get_info(dev, &info) == PARITY_STATUS_OK)
    cl = cl_ref_create(info.name, why, sizeof why);
  /* on a Vulkan device: the same add dispatched straight through Vulkan (vk_ref.h) */
  int is_vk = !strcmp(parity_device_backend(dev), "vulkan");
  vk_ref *vk = NULL;
  if (ok && is_vk && parity_device_get_info(dev, &info) == PARITY_STATUS_OK)
    vk = vk_ref_create(info.name, why, sizeof why);
  const char *raw_name = is_vk ? "raw Vulkan add" : "raw OpenCL add";
  /* the kinds interleaved, run by run, after one warm-up run of each */
  for (int r = -1; r < RUNS && ok; r++)
    for (int k = 0; k < (cl || vk ? 5 : 4) && ok; k++) {
      double us = one_run(k, &d, plan, dev, cl, vk);
      ok = us >= 0;
      if (r >= 0) runs[k][r] = us;
    }
  if (ok) {
    const char *names[3] = {"dense22-eager", "dense22-replayed", "add2-per-op"};
    double v[3] = {median(eager), median(replay), median(add)}, floor = median(host); /* median() sorts */
    for (int k = 0; k < 3; k++) {
      bench_figure *f = bench_add(run->results, "prepared", names[k], backend, k < 2 ? "2x2" : "2", k < 2 ? 4 : 2,
                                  run->threads, v[k], "us");
      if (!f) break;
      f->spread = bench_spread(runs[k], RUNS);
      bench_ref_value(f, "host C loop", floor);
      if (k == 1) bench_ref_value(f, "dense22-eager", v[0]);
      if (k == 2 && (cl || vk))
        bench_ref_value(f, raw_name, median(raw));
      else if (k == 2 && why[0])
        bench_ref_missing(f, raw_name, why);
    }
    bench_print_header(run->log, "prepared");
    for (size_t k = run->results->n - 3; k < run->results->n; k++) bench_print_row(run->log, &run->results->fig[k]);
  } else {
    fprintf(run->log, "%s: prepared failed: %s\n", backend, parity_last_error());
    run->failures++;
  }
  cl_ref_destroy(cl);
  vk_ref_destroy(vk);
  parity_plan_destroy(plan);
  parity_tensor_release(d.x);
  parity_tensor_release(d.w);
  parity_tensor_release(d.b);
}
