/* elementwise_test.h — helpers shared by the CPU elementwise tests (test_elementwise_*.c):
 * run one elementwise op on contiguous host arrays, round to a dtype, compare under the
 * conformance rule, finite differences, raw byte access and thread-count control. */
#ifndef PARITY_TESTS_ELEMENTWISE_TEST_H
#define PARITY_TESTS_ELEMENTWISE_TEST_H

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/tolerance.h"
#include "test_util.h"

#define EWT_FLOATS \
  { PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16 }
#define EWT_ALL_DTYPES                                                                                           \
  {                                                                                                              \
    PARITY_DTYPE_F64, PARITY_DTYPE_F32, PARITY_DTYPE_F16, PARITY_DTYPE_BF16, PARITY_DTYPE_I32, PARITY_DTYPE_I64, \
        PARITY_DTYPE_BOOL                                                                                        \
  }

static inline parity_device_t *ewt_dev(void) { return pt_device("cpu"); }

/* Deterministic uniform value in [lo, hi). */
static inline double ewt_rand(uint64_t *s, double lo, double hi) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (hi - lo) * ((double)(*s >> 11) * 0x1p-53);
}

/* v rounded to dtype (the way pt_tensor_new stores it), widened back to double. */
static inline double ewt_round(int32_t dtype, double v) {
  unsigned char buf[8];
  psup_store_f64(buf, dtype, v);
  return psup_load_f64(buf, dtype);
}

/* Bitwise equality of two values that are exactly representable in the tested dtype: equal
 * with the same sign, or both NaN. */
static inline int ewt_same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

/* Run op on n contiguous elements. in[k] are host values (stored rounded to the operand's
 * dtype); out[k] receive the results (NULL: output not requested, passed as NULL to the
 * kernel). in_dt/out_dt give each operand's dtype. Returns the status. */
static inline parity_status_t ewt_run(int32_t op, int32_t dir, int64_t n, uint32_t nin, const int32_t *in_dt,
                                      const double *const *in, uint32_t nout, const int32_t *out_dt, double *const *out,
                                      double alpha) {
  parity_device_t *dev = ewt_dev();
  pt_tensor ti[PARITY_MAX_INPUTS], to[PARITY_MAX_OUTPUTS];
  const pt_tensor *pi[PARITY_MAX_INPUTS], *po[PARITY_MAX_OUTPUTS];
  for (uint32_t k = 0; k < nin; k++) {
    ti[k] = pt_tensor_new(dev, in_dt[k], 1, &n, in[k]);
    pi[k] = &ti[k];
  }
  for (uint32_t k = 0; k < nout; k++) {
    if (out[k]) to[k] = pt_tensor_new(dev, out_dt[k], 1, &n, NULL);
    po[k] = out[k] ? &to[k] : NULL;
  }
  parity_op_params_t params;
  memset(&params, 0, sizeof params);
  params.unary.alpha = alpha;
  parity_status_t st = pt_run(dev, op, dir, pi, nin, po, nout, &params);
  for (uint32_t k = 0; k < nout; k++)
    if (out[k]) {
      if (st == PARITY_STATUS_OK) pt_tensor_read(&to[k], out[k]);
      pt_tensor_free(&to[k]);
    }
  for (uint32_t k = 0; k < nin; k++) pt_tensor_free(&ti[k]);
  return st;
}

/* The same, asserting success; every operand has dtype dt. */
static inline void ewt_unary(int32_t op, int32_t dt, int64_t n, const double *x, double *y, double alpha) {
  int32_t d[1] = {dt};
  const double *in[1] = {x};
  double *out[1] = {y};
  parity_status_t st = ewt_run(op, PARITY_DIRECTION_FORWARD, n, 1, d, in, 1, d, out, alpha);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s %s: %s", psup_op_name(op), psup_dtype_name(dt), parity_last_error());
}

static inline void ewt_unary_bwd(int32_t op, int32_t dt, int64_t n, const double *x, const double *y, const double *dy,
                                 double *dx, double alpha) {
  int32_t d[3] = {dt, dt, dt};
  const double *in[3] = {x, y, dy};
  double *out[1] = {dx};
  parity_status_t st = ewt_run(op, PARITY_DIRECTION_BACKWARD, n, 3, d, in, 1, d, out, alpha);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s bwd %s: %s", psup_op_name(op), psup_dtype_name(dt), parity_last_error());
}

static inline void ewt_binary(int32_t op, int32_t dt, int64_t n, const double *a, const double *b, double *c) {
  int32_t d[2] = {dt, dt};
  const double *in[2] = {a, b};
  double *out[1] = {c};
  parity_status_t st = ewt_run(op, PARITY_DIRECTION_FORWARD, n, 2, d, in, 1, d, out, 0);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s %s: %s", psup_op_name(op), psup_dtype_name(dt), parity_last_error());
}

static inline void ewt_binary_bwd(int32_t op, int32_t dt, int64_t n, const double *a, const double *b, const double *c,
                                  const double *dc, double *da, double *db) {
  int32_t d[4] = {dt, dt, dt, dt};
  const double *in[4] = {a, b, c, dc};
  double *out[2] = {da, db};
  parity_status_t st = ewt_run(op, PARITY_DIRECTION_BACKWARD, n, 4, d, in, 2, d, out, 0);
  cr_assert_eq(st, PARITY_STATUS_OK, "%s bwd %s: %s", psup_op_name(op), psup_dtype_name(dt), parity_last_error());
}

/* Backward rule: both NaN, equal to ref rounded to dt (infinities from overflow included), or
 * within psup_accum_bound. */
static inline int ewt_grad_ok(int32_t dt, double got, double ref, double abs_ref, int64_t k) {
  if (isnan(got) || isnan(ref)) return isnan(got) && isnan(ref);
  if (got == ewt_round(dt, ref)) return 1;
  return fabs(got - ref) <= psup_accum_bound(dt, ref, abs_ref, k);
}

/* A raw buffer tensor over `elems` elements, filled with the byte `fill`, viewed through
 * rank/shape/strides from element `offset`. */
static inline pt_tensor ewt_raw(int32_t dtype, int64_t elems, unsigned char fill, uint32_t rank, const int64_t *shape,
                                const int64_t *strides, int64_t offset) {
  parity_device_t *dev = ewt_dev();
  pt_tensor t;
  memset(&t, 0, sizeof t);
  uint64_t bytes = (uint64_t)elems * psup_dtype_size(dtype);
  cr_assert_eq(parity_buffer_alloc(dev, bytes, &t.buf), PARITY_STATUS_OK, "%s", parity_last_error());
  if (bytes) cr_assert_eq(parity_buffer_fill(t.buf, 0, bytes, &fill, 1), PARITY_STATUS_OK);
  psup_tensor_init(&t.desc, dtype, rank, shape, parity_buffer_handle(t.buf), (uint64_t)offset * psup_dtype_size(dtype));
  if (strides)
    for (uint32_t i = 0; i < rank; i++) t.desc.strides[i] = strides[i];
  return t;
}

/* Write / read the whole buffer of t as raw bytes. */
static inline void ewt_write_bytes(pt_tensor *t, const void *src, uint64_t bytes) {
  cr_assert_eq(parity_buffer_write(t->buf, 0, src, bytes), PARITY_STATUS_OK, "%s", parity_last_error());
}
static inline void ewt_read_bytes(const pt_tensor *t, void *dst, uint64_t bytes) {
  cr_assert_eq(parity_buffer_read(t->buf, 0, dst, bytes), PARITY_STATUS_OK, "%s", parity_last_error());
}

/* Set the OpenMP thread count the CPU plugin uses (it links libgomp); call after ewt_dev().
 * Returns 0 when OpenMP is not loaded. */
static inline int ewt_set_threads(int n) {
  void *h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  void (*set)(int) = (void (*)(int))dlsym(h, "omp_set_num_threads");
  if (set) set(n);
  dlclose(h);
  return set != NULL;
}

#endif
