/* dist_check — the MPI side of the distributed tests (driven by tests/dist/run_dist_tests.sh
 * through mpirun). One mode per run; exit status 0 only when every check on this rank passed.
 *   grads      the gradients of a small MLP over a global batch of 16 cut into 4 slices, each rank
 *              its slices, then parity_dist_allreduce: prints them in hex on rank 0 (the driver
 *              compares 1, 2 and 4 ranks bit for bit); checks every rank holds the same bits, the
 *              bucketed path gives the same bits, MEAN is SUM / size, and (rank 0) the one-backward
 *              full-batch gradient is within the documented bound.
 *   bcast      parity_dist_broadcast of f32, f64, i32 tensors from rank 0 and from the last rank.
 *   shape | dtype | count | step   rank 1 passes a mismatching list (or calls broadcast): every rank must get
 *              INVALID_ARGUMENT with the message naming rank 1 (and the tensor), and stay usable.
 *   stall      rank 1 stops taking part: the others must abort naming it (never returns OK). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parity/dist.h"
#include "parity/parity.h"

static int g_rank;
static int g_fail;
#define EXPECT(cond, ...)                                                 \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "dist_check: rank %d: FAILED %s: ", g_rank, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
      g_fail = 1;                                                         \
    }                                                                     \
  } while (0)
#define OK(expr)                                                                                     \
  do {                                                                                               \
    if ((expr) != PARITY_STATUS_OK) {                                                                \
      fprintf(stderr, "dist_check: rank %d: %s failed: %s %s\n", g_rank, #expr, parity_last_error(), \
              parity_dist_last_error());                                                             \
      exit(1);                                                                                       \
    }                                                                                                \
  } while (0)

enum { B = 16, S = 4, IN = 8, HID = 16, OUT = 4, NP = 4 };
static const int64_t pshape[NP][2] = {{HID, IN}, {HID, 0}, {OUT, HID}, {OUT, 0}};

static parity_tensor_t *x_all, *y_all, *params[NP];

static void make_model(parity_device_t *dev) {
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){B, IN}, 0, 1, 5, 0, &x_all));
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, (int64_t[]){B, OUT}, 0, 1, 5, 1ull << 32, &y_all));
  for (int i = 0; i < NP; i++) {
    uint32_t r = pshape[i][1] ? 2 : 1;
    OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, r, pshape[i], 0, 0.3, 5, (uint64_t)(i + 2) << 32, &params[i]));
    OK(parity_tensor_set_requires_grad(params[i], 1));
  }
}

static void zero_grads(void) {
  for (int i = 0; i < NP; i++) parity_tensor_zero_grad(params[i]);
}

/* backward of samples [lo, hi)'s share of the global mean loss */
static void backward_slice(int64_t lo, int64_t hi) {
  parity_tensor_t *xs, *ys, *h, *a, *o, *l, *s;
  OK(parity_slice(x_all, 0, lo, hi, 1, &xs));
  OK(parity_slice(y_all, 0, lo, hi, 1, &ys));
  OK(parity_linear(xs, params[0], params[1], &h));
  OK(parity_unary(PARITY_OP_TANH, h, &a));
  OK(parity_linear(a, params[2], params[3], &o));
  OK(parity_mse_loss(o, ys, &l));
  OK(parity_mul_scalar(l, (double)(hi - lo) / B, &s));
  OK(parity_backward(s, NULL, 0));
  parity_tensor_t *all[] = {xs, ys, h, a, o, l, s};
  for (int i = 0; i < 7; i++) parity_tensor_release(all[i]);
}

static int64_t nparams(void) {
  int64_t n = 0;
  for (int i = 0; i < NP; i++) n += parity_tensor_numel(params[i]);
  return n;
}

static void grads_to(float *dst) {
  for (int i = 0; i < NP; i++) {
    int64_t n = parity_tensor_numel(params[i]);
    OK(parity_tensor_to_host(parity_tensor_grad(params[i]), dst, (uint64_t)n * 4));
    dst += n;
  }
}
static void grads_from(const float *src) {
  for (int i = 0; i < NP; i++) {
    int64_t n = parity_tensor_numel(params[i]);
    OK(parity_tensor_write(parity_tensor_grad(params[i]), src, (uint64_t)n * 4));
    src += n;
  }
}

/* This rank's slices, tree-summed, left in .grad. */
static void local_grads(int rank, int size, float *out) {
  int k = S / size;
  int64_t n = nparams(), bs = B / S;
  float *parts = malloc(sizeof(float) * (size_t)(n * k));
  const void *pp[S];
  for (int j = 0; j < k; j++) {
    zero_grads();
    backward_slice((rank * k + j) * bs, (rank * k + j + 1) * bs);
    grads_to(parts + n * j);
    pp[j] = parts + n * j;
  }
  OK(parity_dist_tree_sum(PARITY_DTYPE_F32, (uint64_t)n, pp, (uint32_t)k, out));
  grads_from(out);
  free(parts);
}

static uint64_t hash_bits(const float *v, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *b = (const unsigned char *)v;
  for (int64_t i = 0; i < n * 4; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static void mode_grads(parity_dist_t *d, parity_device_t *dev) {
  int rank = parity_dist_rank(d), size = parity_dist_size(d);
  EXPECT(S % size == 0, "the gradient test runs on 1, 2 or 4 ranks, not %d", size);
  make_model(dev);
  int64_t n = nparams();
  float *mine = malloc(sizeof(float) * (size_t)n), *sum = malloc(sizeof(float) * (size_t)n),
        *buck = malloc(sizeof(float) * (size_t)n), *mean = malloc(sizeof(float) * (size_t)n);
  /* simple path */
  local_grads(rank, size, mine);
  parity_tensor_t *g[NP];
  for (int i = 0; i < NP; i++) g[i] = parity_tensor_grad(params[i]);
  OK(parity_dist_allreduce(d, g, NP, PARITY_DIST_SUM));
  grads_to(sum);
  /* every rank holds the same bits */
  uint64_t h = hash_bits(sum, n), *hs = malloc(sizeof(uint64_t) * (size_t)size);
  MPI_Allgather(&h, 1, MPI_UINT64_T, hs, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < size; r++) EXPECT(hs[r] == h, "rank %d's reduced gradient differs from rank %d's", r, rank);
  /* bucketed path: the same bits (buckets of 100 bytes: several buckets in flight) */
  parity_dist_buckets_t *bk;
  OK(parity_dist_buckets_create(d, params, NP, 100, PARITY_DIST_SUM, &bk));
  EXPECT(parity_dist_buckets_count(bk) >= 3, "%u buckets", parity_dist_buckets_count(bk));
  for (int rep = 0; rep < 2; rep++) {
    grads_from(mine);
    for (int i = NP - 1; i >= 0; i--) OK(parity_dist_buckets_ready(bk, (uint32_t)i));
    OK(parity_dist_buckets_finish(bk));
    grads_to(buck);
    EXPECT(!memcmp(buck, sum, sizeof(float) * (size_t)n), "bucketed all-reduce (round %d) differs from the simple one",
           rep);
  }
  parity_dist_buckets_destroy(bk);
  /* MEAN is SUM / size */
  grads_from(mine);
  OK(parity_dist_allreduce(d, g, NP, PARITY_DIST_MEAN));
  grads_to(mean);
  for (int64_t i = 0; i < n; i++) EXPECT(mean[i] == sum[i] / (float)size, "mean[%lld]", (long long)i);
  if (rank == 0) {
    /* the one-backward full-batch gradient, within 2 (B-1) u sum_b |per-sample gradient| */
    float *full = malloc(sizeof(float) * (size_t)n), *absum = calloc((size_t)n, sizeof(float)),
          *one = malloc(sizeof(float) * (size_t)n);
    zero_grads();
    backward_slice(0, B);
    grads_to(full);
    for (int b = 0; b < B; b++) {
      zero_grads();
      backward_slice(b, b + 1);
      grads_to(one);
      for (int64_t i = 0; i < n; i++) absum[i] += fabsf(one[i]);
    }
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
      double bound = 2.0 * (B - 1) * ldexp(1, -24) * absum[i] * 1.01 + 1e-30;
      double ratio = fabs((double)full[i] - sum[i]) / bound;
      if (ratio > worst) worst = ratio;
      EXPECT(fabs((double)full[i] - sum[i]) <= bound, "element %lld: sliced %.9g, full batch %.9g, bound %.3g",
             (long long)i, sum[i], full[i], bound);
    }
    int differ = 0;
    for (int64_t i = 0; i < n; i++) differ += full[i] != sum[i];
    printf("full-batch gradient: %d of %lld elements differ, worst |diff| / bound %.3f\n", differ, (long long)n, worst);
    printf("grads %s ranks %d:", parity_device_backend(dev), size);
    for (int64_t i = 0; i < n; i++) {
      uint32_t u;
      memcpy(&u, &sum[i], 4);
      printf(" %08x", u);
    }
    printf("\n");
    free(full);
    free(absum);
    free(one);
  }
  free(hs);
  free(mine);
  free(sum);
  free(buck);
  free(mean);
  for (int i = 0; i < NP; i++) parity_tensor_release(params[i]);
  parity_tensor_release(x_all);
  parity_tensor_release(y_all);
}

static void mode_bcast(parity_dist_t *d, parity_device_t *dev) {
  int rank = parity_dist_rank(d), size = parity_dist_size(d);
  for (int root = 0; root<size; root += size> 1 ? size - 1 : 1) {
    parity_tensor_t *t[3];
    float f[6];
    double dd[5];
    int32_t ii[4];
    for (int i = 0; i < 6; i++) f[i] = rank == root ? 0.5f * (float)i + (float)root : -1;
    for (int i = 0; i < 5; i++) dd[i] = rank == root ? 1.0 / (i + 3) + root : -1;
    for (int i = 0; i < 4; i++) ii[i] = rank == root ? 100 * i + root : -1;
    OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 2, (int64_t[]){2, 3}, f, &t[0]));
    OK(parity_tensor_from_host(dev, PARITY_DTYPE_F64, 1, (int64_t[]){5}, dd, &t[1]));
    OK(parity_tensor_from_host(dev, PARITY_DTYPE_I32, 1, (int64_t[]){4}, ii, &t[2]));
    OK(parity_dist_broadcast(d, t, 3, root));
    OK(parity_tensor_to_host(t[0], f, sizeof f));
    OK(parity_tensor_to_host(t[1], dd, sizeof dd));
    OK(parity_tensor_to_host(t[2], ii, sizeof ii));
    for (int i = 0; i < 6; i++)
      EXPECT(f[i] == 0.5f * (float)i + (float)root, "f32[%d] = %g from root %d", i, f[i], root);
    for (int i = 0; i < 5; i++) EXPECT(dd[i] == 1.0 / (i + 3) + root, "f64[%d] = %g from root %d", i, dd[i], root);
    for (int i = 0; i < 4; i++) EXPECT(ii[i] == 100 * i + root, "i32[%d] = %d from root %d", i, ii[i], root);
    for (int i = 0; i < 3; i++) parity_tensor_release(t[i]);
  }
  parity_tensor_t *bad = NULL;
  EXPECT(parity_dist_broadcast(d, &bad, 0, size) == PARITY_STATUS_OUT_OF_RANGE, "root %d is refused", size);
  if (!g_fail) printf("rank %d: broadcast ok\n", rank);
}

static void mode_mismatch(parity_dist_t *d, parity_device_t *dev, const char *what) {
  int rank = parity_dist_rank(d);
  parity_tensor_t *t[3];
  int odd = rank == 1;
  OK(parity_tensor_zeros(dev, odd && !strcmp(what, "dtype") ? PARITY_DTYPE_F64 : PARITY_DTYPE_F32, 1, (int64_t[]){7},
                         &t[0]));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){3, odd && !strcmp(what, "shape") ? 5 : 4}, &t[1]));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, &t[2]));
  uint32_t n = odd && !strcmp(what, "count") ? 2 : 3;
  /* step: rank 1 broadcasts while the others all-reduce */
  parity_status_t st = odd && !strcmp(what, "step") ? parity_dist_broadcast(d, t, n, 0)
                                                    : parity_dist_allreduce(d, t, n, PARITY_DIST_SUM);
  EXPECT(st == PARITY_STATUS_INVALID_ARGUMENT, "status %d", (int)st);
  printf("rank %d: %s\n", rank, parity_dist_last_error());
  /* the ranks stay usable: a matching call works */
  for (int i = 0; i < 3; i++) parity_tensor_release(t[i]);
  float one = 1, got = 0;
  parity_tensor_t *u;
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1}, &one, &u));
  OK(parity_dist_allreduce(d, &u, 1, PARITY_DIST_SUM));
  OK(parity_tensor_to_host(u, &got, 4));
  EXPECT(got == (float)parity_dist_size(d), "sum of ones after the mismatch: %g", got);
  parity_tensor_release(u);
}

static void mode_stall(parity_dist_t *d, parity_device_t *dev) {
  parity_tensor_t *t;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F32, 1, (int64_t[]){1000}, &t));
  OK(parity_dist_allreduce(d, &t, 1, PARITY_DIST_SUM)); /* everyone takes part once */
  if (parity_dist_rank(d) == 1) {
    fprintf(stderr, "dist_check: rank 1 stops taking part\n");
    for (;;) pause();
  }
  parity_status_t st = parity_dist_allreduce(d, &t, 1, PARITY_DIST_SUM);
  fprintf(stderr, "dist_check: rank %d: FAILED: the all-reduce returned %d without rank 1\n", parity_dist_rank(d),
          (int)st);
  exit(1);
}

int main(int argc, char **argv) {
  parity_dist_t *d;
  OK(parity_dist_init(&argc, &argv, NULL, &d));
  g_rank = parity_dist_rank(d);
  const char *mode = argc > 1 ? argv[1] : "";
  parity_context_t *ctx;
  parity_device_t *dev;
  OK(parity_context_create(NULL, &ctx));
  OK(parity_context_default_device(ctx, &dev));
  if (!strcmp(mode, "grads"))
    mode_grads(d, dev);
  else if (!strcmp(mode, "bcast"))
    mode_bcast(d, dev);
  else if (!strcmp(mode, "shape") || !strcmp(mode, "dtype") || !strcmp(mode, "count") || !strcmp(mode, "step"))
    mode_mismatch(d, dev, mode);
  else if (!strcmp(mode, "stall"))
    mode_stall(d, dev);
  else {
    fprintf(stderr, "usage: mpirun -np N dist_check grads|bcast|shape|dtype|count|step|stall\n");
    return 2;
  }
  fflush(stdout);
  parity_context_destroy(ctx);
  parity_dist_finalize(d);
  return g_fail;
}
