/* The OpenCL plugin's softmax and log_softmax against the CPU plugin in float64: every axis of
 * a strided rank-3 view, every floating dtype, forward and backward, the special rows (all
 * -inf, NaN, +inf entries) and logits offset by +1000. */
#include "ocl_test.h"

static const int32_t dtypes[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};

/* S for softmax backward, which subtracts: |y|(|dy| + sum|y dy|) and |dy| + exp(y) sum|dy| */
static void softmax_bwd_s(const ot_case *c, double *const *in, double *s) {
  const ot_view *y = &c->in[0], *dy = &c->in[1];
  int32_t axis = c->params.softmax.axis;
  int64_t idx[3], n = ot_numel(y), len = y->shape[axis];
  for (int64_t j = 0; j < n; j++) {
    for (int64_t r = j, a = 2; a >= 0; a--) {
      idx[a] = r % y->shape[a];
      r /= y->shape[a];
    }
    int64_t keep = idx[axis];
    double yv = ot_at(y, in[0], idx), gv = ot_at(dy, in[1], idx), sum = 0;
    for (int64_t r = 0; r < len; r++) {
      idx[axis] = r;
      sum += c->op == PARITY_OP_LOG_SOFTMAX ? fabs(ot_at(dy, in[1], idx))
                                            : fabs(ot_at(y, in[0], idx) * ot_at(dy, in[1], idx));
    }
    idx[axis] = keep;
    s[j] = c->op == PARITY_OP_LOG_SOFTMAX ? fabs(gv) + exp(yv) * sum : fabs(yv) * (fabs(gv) + sum);
  }
}

/* S for log_softmax forward, (x - max) - log(sum): |x - max| + |log sum| + 1 (a relative error
 * e of the sum is an absolute error e of its log) */
static void log_softmax_fwd_s(const ot_case *c, double *const *in, double *s) {
  const ot_view *x = &c->in[0];
  int32_t axis = c->params.softmax.axis;
  int64_t idx[3], n = ot_numel(x), len = x->shape[axis];
  for (int64_t j = 0; j < n; j++) {
    for (int64_t r = j, a = 2; a >= 0; a--) {
      idx[a] = r % x->shape[a];
      r /= x->shape[a];
    }
    int64_t keep = idx[axis];
    double xv = ot_at(x, in[0], idx), m = -INFINITY, sum = 0;
    for (int64_t r = 0; r < len; r++) {
      idx[axis] = r;
      m = fmax(m, ot_at(x, in[0], idx));
    }
    for (int64_t r = 0; r < len; r++) {
      idx[axis] = r;
      sum += exp(ot_at(x, in[0], idx) - m);
    }
    idx[axis] = keep;
    s[j] = fabs(xv - m) + fabs(log(sum)) + 1;
  }
}

static ot_case softmax_case(int32_t op, int32_t dt, int32_t axis, int dir, const int64_t *shape) {
  ot_case c;
  memset(&c, 0, sizeof c);
  c.name = psup_op_name(op);
  c.op = op;
  c.direction = dir;
  c.params.softmax.axis = axis;
  int64_t xs[3] = {1, shape[0] * shape[2], shape[0]};
  c.lo = -6, c.hi = 6;
  c.k = shape[axis];
  if (dir == PARITY_DIRECTION_FORWARD) {
    c.nin = 1, c.nout = 1;
    c.in[0] = ot_strided(dt, 3, shape, xs, 2);
    c.out[0] = ot_contig(dt, 3, shape);
    if (op == PARITY_OP_LOG_SOFTMAX) c.s_of = log_softmax_fwd_s;
  } else {
    c.nin = 2, c.nout = 1;
    c.in[0] = ot_contig(dt, 3, shape);
    c.in[1] = ot_strided(dt, 3, shape, xs, 0);
    c.out[0] = ot_strided(dt, 3, shape, xs, 1);
    c.lo = 0, c.hi = 1;
    c.s_of = softmax_bwd_s;
  }
  return c;
}

Test(ocl_softmax, every_axis_and_dtype_matches_the_oracle) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[3] = {4, 33, 6};
  for (int32_t op = PARITY_OP_SOFTMAX; op <= PARITY_OP_LOG_SOFTMAX; op++)
    for (int dir = 0; dir < 2; dir++)
      for (size_t k = 0; k < 4; k++)
        for (int32_t axis = 0; axis < 3; axis++) {
          ot_case c = softmax_case(op, dtypes[k], axis, dir, shape);
          ot_check(ocl, cpu, &c);
        }
}

Test(ocl_softmax, special_rows_follow_the_written_semantics) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  /* rows: all -inf; a NaN; two +inf; finite with a -inf; offset by +1000 */
  static const double x[] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, 1, NAN, 2,    3,    INFINITY, 1,
                             INFINITY,  -INFINITY, 1,         -INFINITY, 2, 3,   1001, 1002, 1000,     999};
  int64_t shape[2] = {5, 4};
  for (int32_t op = PARITY_OP_SOFTMAX; op <= PARITY_OP_LOG_SOFTMAX; op++)
    for (size_t k = 0; k < 4; k++) {
      ot_case c;
      memset(&c, 0, sizeof c);
      c.name = psup_op_name(op);
      c.op = op;
      c.params.softmax.axis = 1;
      c.nin = 1, c.nout = 1;
      c.in[0] = c.out[0] = ot_contig(dtypes[k], 2, shape);
      c.values[0] = x;
      c.k = 4;
      ot_check(ocl, cpu, &c);
    }
}

Test(ocl_softmax, offset_logits_give_the_unshifted_result) {
  parity_device_t *ocl = ot_device();
  int64_t shape[2] = {1, 5};
  double base[5] = {0.5, -1, 2, 0.25, 1}, shifted[5], a[5], b[5];
  for (int i = 0; i < 5; i++) shifted[i] = base[i] + 1000;
  pt_tensor x0 = pt_tensor_new(ocl, PARITY_DTYPE_F32, 2, shape, base),
            x1 = pt_tensor_new(ocl, PARITY_DTYPE_F32, 2, shape, shifted);
  pt_tensor y0 = pt_tensor_new(ocl, PARITY_DTYPE_F32, 2, shape, NULL),
            y1 = pt_tensor_new(ocl, PARITY_DTYPE_F32, 2, shape, NULL);
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.softmax.axis = 1;
  const pt_tensor *i0[] = {&x0}, *o0[] = {&y0}, *i1[] = {&x1}, *o1[] = {&y1};
  cr_assert_eq(pt_run(ocl, PARITY_OP_LOG_SOFTMAX, 0, i0, 1, o0, 1, &p), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(pt_run(ocl, PARITY_OP_LOG_SOFTMAX, 0, i1, 1, o1, 1, &p), PARITY_STATUS_OK);
  pt_tensor_read(&y0, a);
  pt_tensor_read(&y1, b);
  for (int i = 0; i < 5; i++) cr_assert(fabs(a[i] - b[i]) <= 1e-6 * (1 + fabs(a[i])), "%d: %g vs %g", i, a[i], b[i]);
}

Test(ocl_softmax, a_long_row_stays_accurate) {
  parity_device_t *ocl = ot_device(), *cpu = pt_device("cpu");
  int64_t shape[3] = {1, 100003, 2};
  for (size_t k = 0; k < 4; k++) {
    ot_case c = softmax_case(PARITY_OP_SOFTMAX, dtypes[k], 1, 0, shape);
    ot_check(ocl, cpu, &c);
  }
}

/* Long unit-stride f32 rows take the vector path (16 lanes, leaves of 1024): lengths around the
 * lane and leaf boundaries agree with float64, twice bit for bit, and a NaN or two +inf entries
 * found anywhere in a long row (in the 16-lane part or the tail) give the special results. */
Test(ocl_softmax, long_unit_stride_rows_are_accurate_reproducible_and_keep_the_special_rows) {
  parity_device_t *dev = ot_device();
  static const int64_t lens[] = {15, 16, 17, 1024, 1025, 2100};
  for (int li = 0; li < 6; li++) {
    int64_t R = lens[li], shape[2] = {3, R};
    double *v = malloc(sizeof(double) * (size_t)(3 * R)), *got = malloc(sizeof(double) * (size_t)(3 * R));
    double *again = malloc(sizeof(double) * (size_t)(3 * R));
    cr_assert(v && got && again);
    for (int64_t i = 0; i < 3 * R; i++) v[i] = (double)(float)(sin((double)i * 0.37) * 8.0);
    v[R + R / 2] = NAN;                         /* row 1: a NaN in the middle */
    v[2 * R + 3] = v[2 * R + R - 1] = INFINITY; /* row 2: two +inf, one in the tail */
    for (int k = 0; k < 2; k++) {
      int32_t op = k ? PARITY_OP_LOG_SOFTMAX : PARITY_OP_SOFTMAX;
      pt_tensor x = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, shape, v),
                y = pt_tensor_new(dev, PARITY_DTYPE_F32, 2, shape, NULL);
      const pt_tensor *in[] = {&x}, *out[] = {&y};
      parity_op_params_t p;
      memset(&p, 0, sizeof p);
      p.softmax.axis = 1;
      cr_assert_eq(pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s",
                   parity_last_error());
      pt_tensor_read(&y, got);
      cr_assert_eq(pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p), PARITY_STATUS_OK, "%s",
                   parity_last_error());
      pt_tensor_read(&y, again);
      cr_assert_eq(memcmp(got, again, sizeof(double) * (size_t)(3 * R)), 0, "R %lld: not reproducible", (long long)R);
      /* row 0 against float64 */
      double m = -INFINITY, sum = 0;
      for (int64_t r = 0; r < R; r++) m = fmax(m, v[r]);
      for (int64_t r = 0; r < R; r++) sum += exp(v[r] - m);
      for (int64_t r = 0; r < R; r++) {
        double want = k ? (v[r] - m) - log(sum) : exp(v[r] - m) / sum;
        double tol = k ? 1e-5 * (fabs(v[r] - m) + fabs(log(sum)) + 1) : 1e-5 * fabs(want) + 1e-30;
        cr_assert(fabs(got[r] - want) <= tol, "R %lld op %d element %lld: %.9g vs %.9g", (long long)R, op, (long long)r,
                  got[r], want);
      }
      for (int64_t r = 0; r < R; r++)
        cr_assert(isnan(got[R + r]), "R %lld: NaN row element %lld is %g", (long long)R, (long long)r, got[R + r]);
      for (int64_t r = 0; r < R; r++) {
        int inf = r == 3 || r == R - 1;
        double want = k ? (inf ? -log(2.0) : -INFINITY) : (inf ? 0.5 : 0.0);
        cr_assert(got[2 * R + r] == want || fabs(got[2 * R + r] - want) < 1e-6, "R %lld: +inf row element %lld is %g",
                  (long long)R, (long long)r, got[2 * R + r]);
      }
      pt_tensor_free(&x);
      pt_tensor_free(&y);
    }
    free(v);
    free(got);
    free(again);
  }
}
