/* ops.c — a parity op and the C reference loops as timing jobs, shared by the kernels and scaling
 * sections (sections.h). */
#include <stdlib.h>
#include <string.h>

#include "parity_support/hugepages.h"
#include "sections.h"
#include "stream_ref.h"

int bench_wanted(const bench_run *run, const char *name) {
  const char *only = run->o->only;
  size_t n = only ? strlen(only) : 0;
  return !only || !strcmp(only, name) || (!strncmp(name, only, n) && name[n] == '-'); /* conv2d: both */
}

void bench_time_figure(const bench_run *run, bench_job *jobs, int n, torch_ref *torch) {
  const int with = torch->prepared, together = with && run->threads <= 1;
  bench_time_jobs(jobs, n + together, &run->timing);
  if (with && !together) bench_time_jobs(&jobs[n], 1, &run->timing);
  torch_ref_done(torch, &jobs[n]);
}

static int op_once(void *p) {
  bench_op *c = p;
  parity_tensor_t *out = NULL;
  int ok = c->fn(c->in, &out) == PARITY_STATUS_OK;
  if (ok && c->backward) {
    for (int i = 0; i < c->nin; i++) parity_tensor_zero_grad(c->in[i]);
    if (!c->seed)
      ok = parity_tensor_ones(c->dev, PARITY_DTYPE_F32, parity_tensor_rank(out), parity_tensor_shape(out), &c->seed) ==
           PARITY_STATUS_OK;
    ok = ok && parity_backward(out, c->seed, 0) == PARITY_STATUS_OK;
  }
  parity_tensor_release(out);
  return ok;
}

static int op_sync(void *p) { return parity_device_synchronize(((bench_op *)p)->dev) == PARITY_STATUS_OK; }

int bench_op_init(bench_run *run, bench_op *c, parity_device_t *dev, const char *name, bench_op_fn fn, int nin,
                  const int *rank, const int64_t (*shape)[4], int backward) {
  *c = (bench_op){dev, fn, {NULL, NULL}, NULL, nin, backward, NULL, NULL};
  for (int i = 0; i < nin; i++) {
    if (parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, (uint32_t)rank[i], shape[i], -1, 1, 5, (uint64_t)i << 40,
                                   &c->in[i]) != PARITY_STATUS_OK ||
        (backward && parity_tensor_set_requires_grad(c->in[i], 1) != PARITY_STATUS_OK)) {
      fprintf(run->log, "  %-16s cannot make its inputs: %s\n", name, parity_last_error());
      run->failures++;
      bench_op_release(c);
      return 0;
    }
  }
  return 1;
}

bench_job bench_op_job(bench_op *c) { return (bench_job){op_once, op_sync, c, -1, 0, NULL}; }

int bench_op_prepare(bench_run *run, bench_op *c, const char *name) {
  int ok = parity_plan_begin(c->dev, &c->plan) == PARITY_STATUS_OK;
  if (ok) {
    ok = c->fn(c->in, &c->planned) == PARITY_STATUS_OK;
    ok = parity_plan_end(c->plan) == PARITY_STATUS_OK && ok; /* stop recording either way */
  }
  if (!ok) fprintf(run->log, "  %-16s cannot be recorded as a plan: %s\n", name, parity_last_error());
  return ok;
}

static int plan_once(void *p) { return parity_plan_replay(((bench_op *)p)->plan) == PARITY_STATUS_OK; }

bench_job bench_plan_job(bench_op *c) { return (bench_job){plan_once, op_sync, c, -1, 0, NULL}; }

void bench_op_release(bench_op *c) {
  parity_tensor_release(c->planned);
  parity_plan_destroy(c->plan);
  c->planned = NULL;
  c->plan = NULL;
  for (int i = 0; i < 2; i++) parity_tensor_release(c->in[i]);
  parity_tensor_release(c->seed);
  c->in[0] = c->in[1] = c->seed = NULL;
}

static volatile float sink;

static int loop_once(void *p) {
  bench_loop *l = p;
  if (l->kind == LOOP_READ)
    sink += ref_read(l->a, l->n);
  else if (l->kind == LOOP_ADD)
    ref_add(l->c, l->a, l->b, l->n);
  else
    ref_triad(l->a, l->b, l->c, 0.5f, l->n);
  return 1;
}

/* The reference loops' arrays start on a cache line and large ones are advised as huge pages,
 * as the CPU plugin's buffers are: malloc's blocks of this size start 16 bytes past one (or
 * anywhere), which halves a cache-resident read. */
static float *bench_alloc(size_t n) {
  size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
  float *p = aligned_alloc(64, bytes ? bytes : 64);
  psup_advise_hugepages(p, bytes);
  return p;
}

int bench_loop_init(bench_loop *l, size_t n, int kind) {
  int three = kind != LOOP_READ;
  *l = (bench_loop){bench_alloc(n), three ? bench_alloc(n) : NULL, three ? bench_alloc(n) : NULL, n, kind};
  if (!l->a || (three && (!l->b || !l->c))) {
    bench_loop_release(l);
    return 0;
  }
  for (size_t i = 0; i < n; i++) l->a[i] = (float)(i % 17) * 0.0625f - 0.5f;
  if (three) {
    memcpy(l->b, l->a, n * sizeof(float));
    memset(l->c, 0, n * sizeof(float));
  }
  return 1;
}

bench_job bench_loop_job(bench_loop *l) { return (bench_job){loop_once, NULL, l, -1, 0, NULL}; }

double bench_loop_bytes(const bench_loop *l) { return (l->kind == LOOP_READ ? 4.0 : 12.0) * (double)l->n; }

void bench_loop_release(bench_loop *l) {
  free(l->a);
  free(l->b);
  free(l->c);
  l->a = l->b = l->c = NULL;
}
