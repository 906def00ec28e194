/* CPU elementwise binary ops: every op forward and backward, in every floating dtype.
 *  - f32, f16 and bf16 forward against the f64 kernel fed the same (rounded) inputs: exact ops
 *    bit for bit, the others within psup_ulp_bound;
 *  - f32, f16 and bf16 backward against the f64 backward fed the same a, b, c, dc, within
 *    psup_accum_bound; a NULL da or db is skipped and the other still computed;
 *  - the f64 backward against central finite differences of the f64 forward;
 *  - integer add/sub/mul/maximum/minimum against exact wrapping arithmetic. */
#include "elementwise_test.h"

typedef struct binary_case {
  int32_t op;
  double alo, ahi, blo, bhi; /* random inputs */
  int b_sign;                /* 1: b's sign is random (|b| drawn from [blo, bhi]) */
} binary_case;

static const binary_case cases[] = {
    {PARITY_OP_ADD, -10, 10, -10, 10, 0},     {PARITY_OP_SUB, -10, 10, -10, 10, 0},
    {PARITY_OP_MUL, -10, 10, -10, 10, 0},     {PARITY_OP_DIV, -10, 10, 0.25, 10, 1},
    {PARITY_OP_POW, 0.1, 4, -3, 3, 0},        {PARITY_OP_MAXIMUM, -10, 10, -10, 10, 0},
    {PARITY_OP_MINIMUM, -10, 10, -10, 10, 0},
};
#define NCASES (sizeof cases / sizeof cases[0])
#define N 3001

/* Pairs every op sees besides the random ones. */
static const double special_a[] = {0.0, -0.0, 0.0,      1.0, -1.0, INFINITY, -INFINITY, NAN,
                                   1.0, 2.0,  0x1p-130, 3.0, -2.0, 1e30,     0.0};
static const double special_b[] = {0.0, 0.0, -0.0, 1.0, 1.0, 1.0, INFINITY, 1.0, NAN, 2.0, 0.5, 3.0, 3.0, 1e30, 2.0};
#define NSPECIAL (sizeof special_a / sizeof special_a[0])

static void fill(const binary_case *c, int32_t dt, double *a, double *b, uint64_t seed) {
  for (int i = 0; i < N; i++) {
    if ((size_t)i < NSPECIAL) {
      a[i] = ewt_round(dt, special_a[i]);
      b[i] = ewt_round(dt, special_b[i]);
      continue;
    }
    a[i] = ewt_round(dt, ewt_rand(&seed, c->alo, c->ahi));
    double v = ewt_rand(&seed, c->blo, c->bhi);
    if (c->b_sign && ewt_rand(&seed, 0, 1) < 0.5) v = -v;
    b[i] = ewt_round(dt, v);
    if (i % 50 == 0) b[i] = a[i]; /* ties */
  }
}

Test(elementwise_binary, reduced_precision_forward_matches_f64_within_ulp_bound) {
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
  double *got = malloc(sizeof(double) * N), *ref = malloc(sizeof(double) * N);
  for (size_t k = 0; k < NCASES; k++)
    for (int d = 0; d < 3; d++) {
      int32_t op = cases[k].op, dt = dts[d];
      fill(&cases[k], dt, a, b, 31u + (uint64_t)op * 3u + (uint64_t)dt);
      ewt_binary(op, dt, N, a, b, got);
      ewt_binary(op, PARITY_DTYPE_F64, N, a, b, ref);
      int exact = psup_op_is_exact(op, dt);
      double bound = psup_ulp_bound(op, dt), worst = 0;
      for (int i = 0; i < N; i++) {
        double r = ewt_round(dt, ref[i]);
        if (ewt_same(got[i], r)) continue;
        cr_assert(!exact, "%s %s is exact: a=%a b=%a got %a, f64 rounded %a", psup_op_name(op), psup_dtype_name(dt),
                  a[i], b[i], got[i], r);
        double u = pt_ulp_diff(got[i], ref[i], dt);
        if (u > worst) worst = u;
        cr_assert(u <= bound, "%s %s: a=%a b=%a got %a, f64 %a: %.2f ulp > %.1f", psup_op_name(op), psup_dtype_name(dt),
                  a[i], b[i], got[i], ref[i], u, bound);
      }
      cr_log_info("%s %s forward: max %.2f ulp", psup_op_name(op), psup_dtype_name(dt), worst);
    }
  free(a);
  free(b);
  free(got);
  free(ref);
}

Test(elementwise_binary, reduced_precision_backward_matches_f64_on_the_same_stored_values) {
  const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  double *a = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N), *c = malloc(sizeof(double) * N);
  double *dc = malloc(sizeof(double) * N), *da = malloc(sizeof(double) * N), *db = malloc(sizeof(double) * N);
  double *rda = malloc(sizeof(double) * N), *rdb = malloc(sizeof(double) * N);
  for (size_t k = 0; k < NCASES; k++)
    for (int d = 0; d < 3; d++) {
      int32_t op = cases[k].op, dt = dts[d];
      uint64_t seed = 9u + (uint64_t)op;
      fill(&cases[k], dt, a, b, seed);
      for (int i = 0; i < N; i++) dc[i] = ewt_round(dt, ewt_rand(&seed, -2, 2));
      ewt_binary(op, dt, N, a, b, c); /* the stored forward output of this dtype */
      ewt_binary_bwd(op, dt, N, a, b, c, dc, da, db);
      ewt_binary_bwd(op, PARITY_DTYPE_F64, N, a, b, c, dc, rda, rdb);
      double worst = 0;
      for (int i = 0; i < N; i++) {
        const double got[2] = {da[i], db[i]}, ref[2] = {rda[i], rdb[i]};
        for (int w = 0; w < 2; w++) {
          double bound = psup_accum_bound(dt, ref[w], fabs(ref[w]), 1);
          if (isfinite(got[w]) && isfinite(ref[w]) && fabs(got[w] - ref[w]) / bound > worst)
            worst = fabs(got[w] - ref[w]) / bound;
          cr_assert(ewt_grad_ok(dt, got[w], ref[w], fabs(ref[w]), 1),
                    "%s bwd %s %s: a=%a b=%a c=%a dc=%a got %a, f64 %a", psup_op_name(op), psup_dtype_name(dt),
                    w ? "db" : "da", a[i], b[i], c[i], dc[i], got[w], ref[w]);
        }
      }
      cr_log_info("%s %s backward: max error %.2f of the bound", psup_op_name(op), psup_dtype_name(dt), worst);
    }
  free(a);
  free(b);
  free(c);
  free(dc);
  free(da);
  free(db);
  free(rda);
  free(rdb);
}

Test(elementwise_binary, backward_skips_a_null_output_and_still_computes_the_other) {
  enum { M = 37 };
  double a[M], b[M], c[M], dc[M], da[M], db[M], only_a[M], only_b[M];
  uint64_t seed = 3;
  for (int i = 0; i < M; i++) {
    a[i] = ewt_rand(&seed, 0.5, 3);
    b[i] = ewt_rand(&seed, -2, 2);
    dc[i] = ewt_rand(&seed, -1, 1);
  }
  for (int dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    ewt_binary(PARITY_OP_POW, dt, M, a, b, c);
    ewt_binary_bwd(PARITY_OP_POW, dt, M, a, b, c, dc, da, db);
    ewt_binary_bwd(PARITY_OP_POW, dt, M, a, b, c, dc, only_a, NULL);
    ewt_binary_bwd(PARITY_OP_POW, dt, M, a, b, c, dc, NULL, only_b);
    for (int i = 0; i < M; i++) {
      cr_assert(ewt_same(da[i], only_a[i]) && ewt_same(db[i], only_b[i]), "%s element %d", psup_dtype_name(dt), i);
    }
  }
  /* both NULL: nothing to do, still OK */
  ewt_binary_bwd(PARITY_OP_MUL, PARITY_DTYPE_F32, M, a, b, c, dc, NULL, NULL);
}

Test(elementwise_binary, f64_backward_matches_central_finite_differences) {
  enum { M = 200 };
  double a[M], b[M], c[M], dc[M], da[M], db[M], p[M], m[M], cp[M], cm[M], h[M];
  for (size_t k = 0; k < NCASES; k++) {
    int32_t op = cases[k].op;
    uint64_t seed = 11u + (uint64_t)op;
    for (int i = 0; i < M; i++) {
      a[i] = ewt_rand(&seed, cases[k].alo, cases[k].ahi);
      double v = ewt_rand(&seed, cases[k].blo, cases[k].bhi);
      if (cases[k].b_sign && ewt_rand(&seed, 0, 1) < 0.5) v = -v;
      if (fabs(a[i] - v) < 0.1) v = a[i] + 0.1; /* away from maximum/minimum ties */
      b[i] = v;
      dc[i] = ewt_rand(&seed, -2, 2);
    }
    ewt_binary(op, PARITY_DTYPE_F64, M, a, b, c);
    ewt_binary_bwd(op, PARITY_DTYPE_F64, M, a, b, c, dc, da, db);
    for (int w = 0; w < 2; w++) {
      const double *x = w ? b : a;
      for (int i = 0; i < M; i++) {
        double step = 1e-6 * fmax(fabs(x[i]), 1e-3);
        p[i] = x[i] + step;
        m[i] = x[i] - step;
        h[i] = (p[i] - m[i]) / 2;
      }
      if (w == 0) {
        ewt_binary(op, PARITY_DTYPE_F64, M, p, b, cp);
        ewt_binary(op, PARITY_DTYPE_F64, M, m, b, cm);
      } else {
        ewt_binary(op, PARITY_DTYPE_F64, M, a, p, cp);
        ewt_binary(op, PARITY_DTYPE_F64, M, a, m, cm);
      }
      for (int i = 0; i < M; i++) {
        double fd = dc[i] * (cp[i] - cm[i]) / (2 * h[i]);
        double got = w ? db[i] : da[i];
        double tol = 1e-6 * (fabs(fd) + fabs(dc[i]) * (1 + fabs(c[i])));
        cr_assert(fabs(got - fd) <= tol, "%s f64 bwd %s at a=%.17g b=%.17g: got %.17g, finite difference %.17g",
                  psup_op_name(op), w ? "db" : "da", a[i], b[i], got, fd);
      }
    }
  }
}

/* ---- integers ------------------------------------------------------------------------------ */

static int64_t int_ref(int32_t op, int64_t a, int64_t b, int is64) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r;
  switch (op) {
    case PARITY_OP_ADD: r = ua + ub; break;
    case PARITY_OP_SUB: r = ua - ub; break;
    case PARITY_OP_MUL: r = ua * ub; break;
    case PARITY_OP_MAXIMUM: r = a > b ? ua : ub; break;
    default: r = a < b ? ua : ub; break;
  }
  return is64 ? (int64_t)r : (int64_t)(int32_t)(uint32_t)r;
}

Test(elementwise_binary, integer_forward_wraps_in_twos_complement) {
  const int32_t ops[] = {PARITY_OP_ADD, PARITY_OP_SUB, PARITY_OP_MUL, PARITY_OP_MAXIMUM, PARITY_OP_MINIMUM};
  enum { K = 9 };
  const int64_t a32[K] = {INT32_MAX, INT32_MIN, INT32_MIN, 65536, -7, 0, 123456, -1, INT32_MAX};
  const int64_t b32[K] = {1, -1, 1, 65536, 3, 0, -654321, -1, INT32_MAX};
  const int64_t a64[K] = {INT64_MAX, INT64_MIN, INT64_MIN, (int64_t)1 << 32, -7, 0, 1234567890123LL, -1, INT64_MAX};
  const int64_t b64[K] = {1, -1, 1, (int64_t)1 << 32, 3, 0, -987654321LL, -1, INT64_MAX};
  for (int w = 0; w < 2; w++) {
    int is64 = w == 1;
    int32_t dt = is64 ? PARITY_DTYPE_I64 : PARITY_DTYPE_I32;
    uint32_t esz = is64 ? 8 : 4;
    const int64_t *av = is64 ? a64 : a32, *bv = is64 ? b64 : b32;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      int64_t shape[1] = {K};
      pt_tensor ta = ewt_raw(dt, K, 0, 1, shape, NULL, 0), tb = ewt_raw(dt, K, 0, 1, shape, NULL, 0);
      pt_tensor tc = ewt_raw(dt, K, 0, 1, shape, NULL, 0);
      unsigned char ia[K * 8], ib[K * 8], out[K * 8];
      for (int i = 0; i < K; i++) {
        int32_t x = (int32_t)av[i], y = (int32_t)bv[i];
        memcpy(ia + i * esz, is64 ? (const void *)&av[i] : (const void *)&x, esz);
        memcpy(ib + i * esz, is64 ? (const void *)&bv[i] : (const void *)&y, esz);
      }
      ewt_write_bytes(&ta, ia, (uint64_t)K * esz);
      ewt_write_bytes(&tb, ib, (uint64_t)K * esz);
      const pt_tensor *pi[2] = {&ta, &tb}, *po[1] = {&tc};
      cr_assert_eq(pt_run(ewt_dev(), ops[o], PARITY_DIRECTION_FORWARD, pi, 2, po, 1, NULL), PARITY_STATUS_OK, "%s",
                   parity_last_error());
      ewt_read_bytes(&tc, out, (uint64_t)K * esz);
      for (int i = 0; i < K; i++) {
        int64_t got;
        if (is64) {
          memcpy(&got, out + i * 8, 8);
        } else {
          int32_t g;
          memcpy(&g, out + i * 4, 4);
          got = g;
        }
        cr_assert_eq(got, int_ref(ops[o], av[i], bv[i], is64), "%s %s(%lld, %lld) = %lld", psup_dtype_name(dt),
                     psup_op_name(ops[o]), (long long)av[i], (long long)bv[i], (long long)got);
      }
      pt_tensor_free(&ta);
      pt_tensor_free(&tb);
      pt_tensor_free(&tc);
    }
  }
}
