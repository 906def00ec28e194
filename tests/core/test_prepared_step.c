/* A prepared training step of parity-train's MLP (784 -> 128 -> relu -> 10, cross-entropy,
 * Adam, batch 64): recorded once, replayed for 100 steps with a new batch written before each,
 * it gives bit for bit the eager loop's losses and parameters, on cpu and opencl; and on cpu a
 * replay (with the writes of the new batch) makes no host allocation at all: malloc and friends
 * are counted by interposing them in this test program. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCS 0 /* the sanitizers own malloc */
#else
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static atomic_int counting;
static atomic_long allocs;
static void note(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&allocs, 1);
}
#define EXPORT __attribute__((visibility("default"))) /* the build hides symbols by default */
EXPORT void *malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
EXPORT void *calloc(size_t a, size_t b) {
  note();
  return __libc_calloc(a, b);
}
EXPORT void *realloc(void *p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
EXPORT void *memalign(size_t a, size_t n) {
  note();
  return __libc_memalign(a, n);
}
EXPORT void *aligned_alloc(size_t a, size_t n) {
  note();
  return __libc_memalign(a, n);
}
EXPORT int posix_memalign(void **p, size_t a, size_t n) {
  note();
  *p = __libc_memalign(a, n);
  return *p ? 0 : ENOMEM;
}
EXPORT void free(void *p) { __libc_free(p); }
#endif

enum { BATCH = 64, IN = 784, HID = 128, OUT = 10, STEPS = 100 };

typedef struct net {
  parity_device_t *dev;
  parity_tensor_t *p[4], *x, *target;
  parity_optimizer_t *opt;
} net;

static parity_tensor_t *param(parity_device_t *dev, uint32_t rank, const int64_t *shape, uint64_t seed) {
  parity_tensor_t *t;
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, rank, shape, 0, 0.05, seed, 0, &t));
  OK(parity_tensor_set_requires_grad(t, 1));
  return t;
}

static net net_new(parity_device_t *dev) {
  net n = {.dev = dev};
  n.p[0] = param(dev, 2, (int64_t[]){HID, IN}, 1);
  n.p[1] = param(dev, 1, (int64_t[]){HID}, 2);
  n.p[2] = param(dev, 2, (int64_t[]){OUT, HID}, 3);
  n.p[3] = param(dev, 1, (int64_t[]){OUT}, 4);
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, IN}, &n.x));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){BATCH, OUT}, &n.target));
  OK(parity_adam_create(n.p, 4, 1e-3, 0.9, 0.999, 1e-8, &n.opt));
  return n;
}

static void net_free(net *n) {
  parity_optimizer_destroy(n->opt);
  for (int i = 0; i < 4; i++) parity_tensor_release(n->p[i]);
  parity_tensor_release(n->x);
  parity_tensor_release(n->target);
}

/* batch s, made on the host (images in [0, 1), one-hot labels) */
static float xs[BATCH * IN], ts[BATCH * OUT];
static void make_batch(int s) {
  uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)(s + 1);
  for (int i = 0; i < BATCH * IN; i++) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    xs[i] = (float)(z >> 40) / (float)(1 << 24);
  }
  memset(ts, 0, sizeof ts);
  for (int b = 0; b < BATCH; b++) ts[b * OUT + (int)(((z >> (b % 32)) + (uint64_t)b * 7) % OUT)] = 1;
}

static void feed(net *n) {
  OK(parity_tensor_write(n->x, xs, sizeof xs));
  OK(parity_tensor_write(n->target, ts, sizeof ts));
}

static parity_tensor_t *step(net *n) {
  parity_optimizer_zero_grad(n->opt);
  parity_tensor_t *h, *a, *logits, *loss;
  OK(parity_linear(n->x, n->p[0], n->p[1], &h));
  OK(parity_unary(PARITY_OP_RELU, h, &a));
  OK(parity_linear(a, n->p[2], n->p[3], &logits));
  OK(parity_cross_entropy(logits, n->target, &loss));
  OK(parity_backward(loss, NULL, 0));
  OK(parity_optimizer_step(n->opt));
  parity_tensor_release(h);
  parity_tensor_release(a);
  parity_tensor_release(logits);
  return loss;
}

static void prepared_step_matches_eager(const char *backend, int count_allocs) {
  parity_device_t *dev = pt_try_device(backend);
  if (!dev) cr_skip_test("no %s device here", backend);
  static float le[STEPS], lr[STEPS];
  net e = net_new(dev), r = net_new(dev);
  long eager_allocs = 0;
  for (int s = 0; s < STEPS; s++) {
    make_batch(s);
#if COUNT_ALLOCS
    atomic_store(&allocs, 0);
    atomic_store(&counting, s == 2);
#endif
    feed(&e);
    parity_tensor_t *loss = step(&e);
#if COUNT_ALLOCS
    atomic_store(&counting, 0);
    if (s == 2) eager_allocs = atomic_load(&allocs);
#endif
    OK(parity_tensor_to_host(loss, &le[s], sizeof le[s]));
    parity_tensor_release(loss);
  }
  make_batch(0);
  feed(&r);
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  parity_tensor_t *loss = step(&r);
  OK(parity_plan_end(plan));
  OK(parity_tensor_to_host(loss, &lr[0], sizeof lr[0]));
  long counted = 0;
  for (int s = 1; s < STEPS; s++) {
    make_batch(s);
#if COUNT_ALLOCS
    atomic_store(&allocs, 0);
    atomic_store(&counting, count_allocs);
#endif
    feed(&r);
    OK(parity_plan_replay(plan));
    OK(parity_device_synchronize(dev));
#if COUNT_ALLOCS
    atomic_store(&counting, 0);
    if (s > 1) counted += atomic_load(&allocs); /* the first replay may warm per-thread caches */
#endif
    OK(parity_tensor_to_host(loss, &lr[s], sizeof lr[s]));
  }
  for (int s = 0; s < STEPS; s++)
    cr_assert_eq(memcmp(&le[s], &lr[s], sizeof le[s]), 0, "%s step %d: eager loss %.9g, replayed %.9g", backend, s,
                 le[s], lr[s]);
  cr_assert_lt(le[STEPS - 1], le[0], "%s: the loss went down", backend);
  for (int i = 0; i < 4; i++) {
    int64_t n = parity_tensor_numel(e.p[i]);
    float *pe = malloc((size_t)n * sizeof *pe), *pr = malloc((size_t)n * sizeof *pr);
    OK(parity_tensor_to_host(e.p[i], pe, (uint64_t)n * sizeof *pe));
    OK(parity_tensor_to_host(r.p[i], pr, (uint64_t)n * sizeof *pr));
    cr_assert_eq(memcmp(pe, pr, (size_t)n * sizeof *pe), 0, "%s: parameter %d differs after %d steps", backend, i,
                 STEPS);
    free(pe);
    free(pr);
  }
  /* the counter sees this library's allocations (from_f64 converts through a host buffer) */
#if COUNT_ALLOCS
  parity_tensor_t *probe;
  atomic_store(&allocs, 0);
  atomic_store(&counting, 1);
  OK(parity_tensor_from_f64(dev, PARITY_DTYPE_F32, 1, (int64_t[]){3}, (double[]){1, 2, 3}, &probe));
  atomic_store(&counting, 0);
  cr_assert_gt(atomic_load(&allocs), 0, "the allocation counter counts nothing");
  parity_tensor_release(probe);
#endif
  cr_log_info("%s: %ld host allocations in an eager step", backend, eager_allocs);
  if (count_allocs && COUNT_ALLOCS)
    cr_assert_eq(counted, 0, "%s: %ld host allocations in %d replays (with the batch writes)", backend, counted,
                 STEPS - 2);
  parity_tensor_release(loss);
  parity_plan_destroy(plan);
  net_free(&e);
  net_free(&r);
}

Test(prepared_step, mlp_step_replays_bitwise_with_no_host_allocation_on_cpu, .timeout = 300) {
  prepared_step_matches_eager("cpu", 1);
}
Test(prepared_step, mlp_step_replays_bitwise_on_opencl, .timeout = 600) { prepared_step_matches_eager("opencl", 0); }
Test(prepared_step, mlp_step_replays_bitwise_on_vulkan, .timeout = 600) { prepared_step_matches_eager("vulkan", 0); }

/* The reductions that read wide tiles (column sums of 4 MB and more: docs/cpu-kernels.md) keep
 * their working space on the stack: replayed, they allocate nothing either, and give the eager
 * bits. */
Test(prepared_step, a_wide_column_sum_replays_bitwise_with_no_host_allocation_on_cpu) {
  parity_device_t *dev = pt_device("cpu");
  const int64_t shape[2] = {1024, 2048}; /* 8 MB of f32, two wide tiles */
  parity_tensor_t *x, *eager, *y;
  OK(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, 2, shape, -1, 1, 7, 0, &x));
  OK(parity_reduce(PARITY_OP_SUM, x, 0x1, 0, &eager));
  parity_plan_t *plan;
  OK(parity_plan_begin(dev, &plan));
  OK(parity_reduce(PARITY_OP_SUM, x, 0x1, 0, &y));
  OK(parity_plan_end(plan));
  OK(parity_plan_replay(plan)); /* may warm per-thread caches */
#if COUNT_ALLOCS
  atomic_store(&allocs, 0);
  atomic_store(&counting, 1);
#endif
  for (int i = 0; i < 3; i++) OK(parity_plan_replay(plan));
  OK(parity_device_synchronize(dev));
#if COUNT_ALLOCS
  atomic_store(&counting, 0);
  cr_assert_eq(atomic_load(&allocs), 0, "%ld host allocations in 3 replays of a column sum", atomic_load(&allocs));
#endif
  float a[2048], b[2048];
  OK(parity_tensor_to_host(eager, a, sizeof a));
  OK(parity_tensor_to_host(y, b, sizeof b));
  cr_assert_eq(memcmp(a, b, sizeof a), 0, "the replayed column sums differ from the eager ones");
  parity_tensor_release(y), parity_tensor_release(eager), parity_tensor_release(x);
  parity_plan_destroy(plan);
}
Test(prepared_step, mlp_step_replays_bitwise_on_cuda, .timeout = 900) { prepared_step_matches_eager("cuda", 0); }
