/* ops.c — timing one parity op and the C reference loops, shared by the kernels and scaling
 * sections (sections.h). */
#include <stdlib.h>
#include <string.h>

#include "sections.h"
#include "stream_ref.h"

int bench_wanted(const bench_run *run, const char *name) {
  return !run->o->only || !strcmp(run->o->only, name);
}

typedef struct op_call {
  parity_device_t *dev;
  bench_op_fn fn;
  parity_tensor_t *in[2], *seed;
  int nin, backward;
} op_call;

static int op_once(void *p) {
  op_call *c = p;
  parity_tensor_t *out = NULL;
  int ok = c->fn(c->in, &out) == PARITY_STATUS_OK;
  if (ok && c->backward) {
    for (int i = 0; i < c->nin; i++) parity_tensor_zero_grad(c->in[i]);
    if (!c->seed) ok = parity_tensor_ones(c->dev, PARITY_DTYPE_F32, parity_tensor_rank(out), parity_tensor_shape(out),
                                          &c->seed) == PARITY_STATUS_OK;
    ok = ok && parity_backward(out, c->seed, 0) == PARITY_STATUS_OK;
  }
  parity_tensor_release(out);
  return ok;
}

static int op_sync(void *p) {
  return parity_device_synchronize(((op_call *)p)->dev) == PARITY_STATUS_OK;
}

double bench_parity_op(bench_run *run, parity_device_t *dev, const char *name, bench_op_fn fn, int nin,
                       const int *rank, const int64_t (*shape)[4], int backward) {
  op_call c = {dev, fn, {NULL, NULL}, NULL, nin, backward};
  double s = -1;
  int ok = 1;
  for (int i = 0; i < nin && ok; i++) {
    ok = parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, (uint32_t)rank[i], shape[i], -1, 1, 5, (uint64_t)i << 40,
                                    &c.in[i]) == PARITY_STATUS_OK;
    if (ok && backward) ok = parity_tensor_set_requires_grad(c.in[i], 1) == PARITY_STATUS_OK;
  }
  if (ok) s = bench_time(op_once, op_sync, &c, &run->timing);
  if (s < 0) {
    fprintf(run->log, "  %-18s unsupported: %s\n", name, parity_last_error());
    run->failures += !ok; /* inputs that cannot be made are a failure; an unsupported op is not */
  }
  for (int i = 0; i < nin; i++) parity_tensor_release(c.in[i]);
  parity_tensor_release(c.seed);
  return s;
}

typedef struct ref_arrays {
  float *a, *b, *c;
  size_t n;
  int kind;
} ref_arrays;

static volatile float sink;

static int ref_once(void *p) {
  ref_arrays *r = p;
  if (r->kind == 0) sink += ref_read(r->a, r->n);
  else if (r->kind == 1) ref_add(r->c, r->a, r->b, r->n);
  else ref_triad(r->a, r->b, r->c, 0.5f, r->n);
  return 1;
}

static double ref_gbs(const bench_run *run, size_t n, int kind) {
  ref_arrays r = {malloc(n * sizeof(float)), kind ? malloc(n * sizeof(float)) : NULL,
                  kind ? malloc(n * sizeof(float)) : NULL, n, kind};
  double gbs = -1;
  if (r.a && (!kind || (r.b && r.c))) {
    for (size_t i = 0; i < n; i++) r.a[i] = (float)(i % 17) * 0.0625f - 0.5f;
    if (kind) {
      memcpy(r.b, r.a, n * sizeof(float));
      memset(r.c, 0, n * sizeof(float));
    }
    double s = bench_time(ref_once, NULL, &r, &run->timing);
    if (s > 0) gbs = (kind ? 12.0 : 4.0) * (double)n / s / 1e9;
  }
  free(r.a);
  free(r.b);
  free(r.c);
  return gbs;
}

double bench_ref_read_gbs(const bench_run *run, size_t n) { return ref_gbs(run, n, 0); }
double bench_ref_add_gbs(const bench_run *run, size_t n) { return ref_gbs(run, n, 1); }
double bench_ref_triad_gbs(const bench_run *run, size_t n) { return ref_gbs(run, n, 2); }
