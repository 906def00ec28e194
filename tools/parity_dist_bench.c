/* parity-dist-bench — all-reduce throughput on MPI ranks, measured in one run:
 *   1. parity_dist_allreduce_host (deterministic, rank-order tree) beside a plain MPI_Allreduce
 *      (MPI_SUM of floats, order up to the MPI library) of the same f32 buffer, 1 MiB .. 256 MiB;
 *   2. gradients of a list of tensors on the PARITY_BACKEND device: the simple path
 *      (parity_dist_allreduce of every .grad) beside the bucketed asynchronous path.
 * GB/s = buffer bytes / seconds per all-reduce: the median over repetitions of the slowest rank's
 * time (the two methods alternate, so both see the same background load).
 * usage: mpirun -np 2 parity-dist-bench [--max-mib M] [--bucket-mib B] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity/dist.h"
#include "parity/parity.h"

static parity_dist_t *g_d;
static void check(parity_status_t st, const char *what) {
  if (st == PARITY_STATUS_OK) return;
  fprintf(stderr, "parity-dist-bench: %s: %s %s\n", what, parity_last_error(), parity_dist_last_error());
  parity_dist_abort(g_d, 1, "benchmark failed");
}

/* The slowest rank's time of each repetition, then the median over repetitions. */
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median_slowest(double *t, int n) {
  MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(t, (size_t)n, sizeof *t, cmp_d);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
enum { MAX_REPS = 32 };

/* --max-mib and --bucket-mib, every argument checked; 0, or 2 after a message on rank 0 (bad usage). */
static int parse_args(int argc, char **argv, int *max_mib, double *bucket_mib) {
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    errno = 0;
    if (!strcmp(argv[i], "--max-mib") && v) {
      long x = strtol(v, &end, 10);
      if (!errno && end != v && !*end && x >= 1 && x <= 4096) {
        *max_mib = (int)x;
        i++;
        continue;
      }
    } else if (!strcmp(argv[i], "--bucket-mib") && v) {
      double x = strtod(v, &end);
      if (!errno && end != v && !*end && x > 0 && x <= 4096) {
        *bucket_mib = x;
        i++;
        continue;
      }
    }
    if (parity_dist_rank(g_d) == 0)
      fprintf(stderr,
              "parity-dist-bench: bad argument '%s%s%s'; usage: parity-dist-bench [--max-mib 1..4096] "
              "[--bucket-mib (0, 4096]]\n",
              argv[i], v ? " " : "", v ? v : "");
    return 2;
  }
  return 0;
}

/* Part 1: parity_dist_allreduce_host beside MPI_Allreduce on host buffers of 1 MiB .. max_mib. */
static void bench_host(int rank, int size, int max_mib) {
  if (rank == 0)
    printf(
        "parity-dist-bench: %d ranks; GB/s = buffer bytes / median time per all-reduce (slowest rank)\n"
        "%10s %14s %14s %10s\n",
        size, "size", "parity GB/s", "MPI GB/s", "ratio");
  for (int mib = 1; mib <= max_mib; mib *= 4) {
    size_t n = (size_t)mib * 1048576 / 4;
    float *a = malloc(n * 4), *b = malloc(n * 4), *src = malloc(n * 4);
    if (!a || !b || !src) parity_dist_abort(g_d, 1, "out of memory");
    for (size_t i = 0; i < n; i++) src[i] = (float)((i * 2654435761u + (size_t)rank) % 1000) * 0.001f;
    int reps = mib >= 256 ? 3 : mib >= 64 ? 5 : mib >= 16 ? 9 : 21;
    double tp[MAX_REPS], tm[MAX_REPS];
    for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
      memcpy(a, src, n * 4);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      check(parity_dist_allreduce_host(g_d, a, n, PARITY_DTYPE_F32, PARITY_DIST_SUM), "allreduce_host");
      double t1 = MPI_Wtime();
      memcpy(b, src, n * 4);
      MPI_Barrier(MPI_COMM_WORLD);
      double t2 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t3 = MPI_Wtime();
      if (r >= 0) {
        tp[r] = t1 - t0;
        tm[r] = t3 - t2;
      }
    }
    double mp = median_slowest(tp, reps), mm = median_slowest(tm, reps);
    if (rank == 0)
      printf("%7d MiB %14.3f %14.3f %10.2f\n", mib, mib * 1048576.0 / mp / 1e9, mib * 1048576.0 / mm / 1e9, mm / mp);
    fflush(stdout);
    free(a);
    free(b);
    free(src);
  }
}

enum { GRAD_TENSORS = 32 };

/* GRAD_TENSORS parameters of `len` elements on dev, each with a gradient (backward of the sum of
 * their sums). */
static void make_grads(parity_device_t *dev, int64_t len, parity_tensor_t **p, parity_tensor_t **g) {
  enum { K = GRAD_TENSORS };
  parity_tensor_t *total = NULL;
  for (int i = 0; i < K; i++) {
    check(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, 1, &len, -1, 1, 7, (uint64_t)i << 32, &p[i]), "param");
    check(parity_tensor_set_requires_grad(p[i], 1), "requires_grad");
    parity_tensor_t *s, *t;
    check(parity_reduce(PARITY_OP_SUM, p[i], 0, 0, &s), "sum");
    if (total) {
      check(parity_binary(PARITY_OP_ADD, total, s, &t), "add");
      parity_tensor_release(total);
      parity_tensor_release(s);
      total = t;
    } else
      total = s;
  }
  check(parity_backward(total, NULL, 0), "backward");
  parity_tensor_release(total);
  for (int i = 0; i < K; i++) g[i] = parity_tensor_grad(p[i]);
}

/* Part 2: gradients on a device, the simple path beside the bucketed one, 4 MiB .. 64 MiB. */
static void bench_gradients(parity_device_t *dev, int rank, int max_mib, double bucket_mib) {
  if (rank == 0)
    printf("gradients on %s, 32 tensors, bucket %g MiB:\n%10s %14s %14s %10s\n", parity_device_backend(dev), bucket_mib,
           "total", "simple GB/s", "bucketed GB/s", "speed-up");
  for (int mib = 4; mib <= (max_mib < 64 ? max_mib : 64); mib *= 4) {
    enum { K = GRAD_TENSORS };
    parity_tensor_t *p[K], *g[K];
    make_grads(dev, (int64_t)mib * 1048576 / 4 / K, p, g);
    parity_dist_buckets_t *bk;
    check(parity_dist_buckets_create(g_d, p, K, (uint64_t)(bucket_mib * 1048576), PARITY_DIST_SUM, &bk), "buckets");
    int reps = mib >= 64 ? 5 : 9;
    double ts[MAX_REPS], tb[MAX_REPS];
    for (int r = -1; r < reps; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      check(parity_dist_allreduce(g_d, g, K, PARITY_DIST_MEAN), "allreduce");
      double t1 = MPI_Wtime();
      MPI_Barrier(MPI_COMM_WORLD);
      double t2 = MPI_Wtime();
      for (int i = K - 1; i >= 0; i--) check(parity_dist_buckets_ready(bk, (uint32_t)i), "ready");
      check(parity_dist_buckets_finish(bk), "finish");
      double t3 = MPI_Wtime();
      if (r >= 0) {
        ts[r] = t1 - t0;
        tb[r] = t3 - t2;
      }
    }
    double ms = median_slowest(ts, reps), mb = median_slowest(tb, reps);
    if (rank == 0)
      printf("%7d MiB %14.3f %14.3f %10.2f\n", mib, mib * 1048576.0 / ms / 1e9, mib * 1048576.0 / mb / 1e9, ms / mb);
    fflush(stdout);
    parity_dist_buckets_destroy(bk);
    for (int i = 0; i < K; i++) parity_tensor_release(p[i]);
  }
}

int main(int argc, char **argv) {
  int max_mib = 256;
  double bucket_mib = 4;
  parity_dist_options_t opt;
  parity_dist_options_init(&opt);
  opt.timeout_s = 600;
  check(parity_dist_init(&argc, &argv, &opt, &g_d), "init");
  if (parse_args(argc, argv, &max_mib, &bucket_mib)) {
    parity_dist_finalize(g_d);
    return 2;
  }
  int rank = parity_dist_rank(g_d), size = parity_dist_size(g_d);
  bench_host(rank, size, max_mib);

  /* Gradients on a device: simple vs bucketed. 32 parameters. */
  parity_context_t *ctx;
  parity_device_t *dev;
  check(parity_context_create(NULL, &ctx), "context");
  check(parity_context_default_device(ctx, &dev), "device");
  bench_gradients(dev, rank, max_mib, bucket_mib);
  parity_context_destroy(ctx);
  parity_dist_finalize(g_d);
  return 0;
}
