/* reduce_run.h — shared by the reduce family's tests (test_reduce.c, test_reduce_semantics.c):
 * an independent reference reduction, and forward and backward runs of one op through the
 * public API on guarded views (rs_helpers.h), read back as doubles. */
#ifndef PARITY_TEST_REDUCE_RUN_H
#define PARITY_TEST_REDUCE_RUN_H

#include "rs_helpers.h"

static const int32_t all_ops[] = {PARITY_OP_SUM, PARITY_OP_MEAN,   PARITY_OP_MAX,
                                  PARITY_OP_MIN, PARITY_OP_ARGMAX, PARITY_OP_ARGMIN};

static inline int is_arg(int32_t op) { return op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN; }

static inline void reduced_shape(uint32_t rank, const int64_t *xs, uint32_t mask, int64_t *ys) {
  for (uint32_t a = 0; a < rank; a++) ys[a] = (mask >> a) & 1u ? 1 : xs[a];
}

/* a ranks above b in the order max/min use: numeric, and +0 above -0 */
static inline int above(double a, double b) {
  if (a != b) return a > b;
  return !signbit(a) && signbit(b);
}

/* Reference reduction, written independently of the plugin: long double sums, and
 * max/min/argmax/argmin by the documented rules. S gets sum|x| (mean: mean|x|). */
static inline void ref_reduce(int32_t op, uint32_t rank, const int64_t *xs, uint32_t mask, const double *x, double *val,
                              int64_t *idx, double *S) {
  int64_t ys[PARITY_MAX_RANK], M = 1, K = 1;
  reduced_shape(rank, xs, mask, ys);
  for (uint32_t a = 0; a < rank; a++) *((mask >> a) & 1u ? &K : &M) *= xs[a];
  long double *acc = calloc((size_t)M + 1, sizeof *acc), *abs_acc = calloc((size_t)M + 1, sizeof *abs_acc);
  int *seen = calloc((size_t)M + 1, sizeof *seen);
  int is_min = op == PARITY_OP_MIN || op == PARITY_OP_ARGMIN;
  for (int64_t o = 0; o < M; o++) idx[o] = -1;
  int64_t n = rs_numel(rank, xs), id[PARITY_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t o = 0, r = 0;
    for (uint32_t a = 0; a < rank; a++) {
      if ((mask >> a) & 1u)
        r = r * xs[a] + id[a];
      else
        o = o * ys[a] + id[a];
    }
    double v = x[i];
    acc[o] += v;
    abs_acc[o] += fabs(v);
    if (!seen[o] || (!isnan(val[o]) && (isnan(v) || (is_min ? above(val[o], v) : above(v, val[o]))))) {
      val[o] = v;
      idx[o] = r;
      seen[o] = 1;
    }
    for (int32_t a = (int32_t)rank - 1; a >= 0; a--)
      if (++id[a] < xs[a])
        break;
      else
        id[a] = 0;
  }
  for (int64_t o = 0; o < M; o++) {
    if (op == PARITY_OP_SUM) val[o] = (double)acc[o];
    if (op == PARITY_OP_MEAN) val[o] = K ? (double)(acc[o] / K) : NAN;
    S[o] = op == PARITY_OP_MEAN ? (double)(abs_acc[o] / (K ? K : 1)) : (double)abs_acc[o];
  }
  free(acc);
  free(abs_acc);
  free(seen);
}

static inline parity_op_params_t mask_params(uint32_t mask) {
  parity_op_params_t p;
  memset(&p, 0, sizeof p);
  p.reduce.axes_mask = mask;
  return p;
}

static inline parity_status_t run_fwd(parity_device_t *dev, int32_t op, pt_tensor *x, pt_tensor *y, uint32_t mask) {
  const pt_tensor *in[1] = {x}, *out[1] = {y};
  parity_op_params_t p = mask_params(mask);
  return pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, out, 1, &p);
}

static inline parity_status_t run_bwd(parity_device_t *dev, int32_t op, pt_tensor *x, pt_tensor *y, pt_tensor *dy,
                                      pt_tensor *dx, uint32_t mask) {
  const pt_tensor *in[3] = {x, y, dy}, *out[1] = {dx};
  parity_op_params_t p = mask_params(mask);
  return pt_run(dev, op, PARITY_DIRECTION_BACKWARD, in, 3, out, 1, &p);
}

/* Run op forward on values x (dtype dt, layouts xl/yl) and return y's values (malloc'ed). */
static inline double *forward(parity_device_t *dev, int32_t op, int32_t dt, uint32_t rank, const int64_t *xs,
                              uint32_t mask, const double *x, rs_layout xl, rs_layout yl) {
  int64_t ys[PARITY_MAX_RANK];
  reduced_shape(rank, xs, mask, ys);
  pt_tensor tx = rs_tensor(dev, dt, rank, xs, xl, x);
  int32_t ydt = is_arg(op) ? PARITY_DTYPE_I64 : dt;
  if (op == PARITY_OP_SUM && dt == PARITY_DTYPE_BOOL) ydt = PARITY_DTYPE_BOOL;
  pt_tensor ty = rs_tensor(dev, ydt, rank, ys, yl, NULL);
  cr_assert_eq(run_fwd(dev, op, &tx, &ty, mask), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(rs_guard_intact(&ty), "%s wrote outside y", psup_op_name(op));
  double *y = rs_read(&ty);
  pt_tensor_free(&tx);
  pt_tensor_free(&ty);
  return y;
}

/* dx of op (f64) for x, with dy, in the given layouts (malloc'ed). */
static inline double *backward(parity_device_t *dev, int32_t op, int32_t dt, uint32_t rank, const int64_t *xs,
                               uint32_t mask, const double *x, const double *dy, rs_layout lay) {
  int64_t ys[PARITY_MAX_RANK];
  reduced_shape(rank, xs, mask, ys);
  double *y = forward(dev, op, dt, rank, xs, mask, x, lay, RS_CONTIG);
  pt_tensor tx = rs_tensor(dev, dt, rank, xs, lay, x);
  pt_tensor ty = rs_tensor(dev, dt, rank, ys, (rs_layout)((lay + 1) % RS_NLAYOUTS), y);
  pt_tensor tdy = rs_tensor(dev, dt, rank, ys, (rs_layout)((lay + 2) % RS_NLAYOUTS), dy);
  pt_tensor tdx = rs_tensor(dev, dt, rank, xs, (rs_layout)((lay + 3) % RS_NEGATIVE), NULL);
  cr_assert_eq(run_bwd(dev, op, &tx, &ty, &tdy, &tdx, mask), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(rs_guard_intact(&tdx), "%s backward wrote outside dx", psup_op_name(op));
  double *dx = rs_read(&tdx);
  pt_tensor_free(&tx), pt_tensor_free(&ty), pt_tensor_free(&tdy), pt_tensor_free(&tdx);
  free(y);
  return dx;
}

/* op over all of x[0..n) (a unit-stride row), as a double (the index for arg ops). */
static inline double one_fwd(parity_device_t *dev, int32_t op, int32_t dt, int64_t n, const double *x) {
  double *y = forward(dev, op, dt, 1, &n, 1, x, RS_CONTIG, RS_CONTIG), v = y[0];
  free(y);
  return v;
}

/* dx of op over all of x[0..n) for one dy. */
static inline void one_bwd(parity_device_t *dev, int32_t op, int32_t dt, int64_t n, const double *x, double dy,
                           double *dx) {
  double *g = backward(dev, op, dt, 1, &n, 1, x, &dy, RS_CONTIG);
  memcpy(dx, g, (size_t)n * sizeof *dx);
  free(g);
}

#endif
