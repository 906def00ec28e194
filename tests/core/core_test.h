/* core_test.h — small helpers for the core tests (f64 tensors on the CPU plugin). */
#ifndef PARITY_CORE_TEST_H
#define PARITY_CORE_TEST_H

#include <math.h>

#include "test_util.h"

#define OK(expr) cr_assert_eq((expr), PARITY_STATUS_OK, "%s: %s", #expr, parity_last_error())

static inline parity_tensor_t *vec(parity_device_t *dev, int32_t dtype, int64_t n, const double *v) {
  parity_tensor_t *t;
  OK(parity_tensor_from_f64(dev, (parity_dtype_t)dtype, 1, &n, v, &t));
  return t;
}

static inline parity_tensor_t *mat(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape,
                                   const double *v) {
  parity_tensor_t *t;
  OK(parity_tensor_from_f64(dev, (parity_dtype_t)dtype, rank, shape, v, &t));
  return t;
}

/* A context that also loads the loader tests' fake plugins (FAKE_PLUGIN_DIR), quiet. */
static inline parity_context_t *context_with_fake_plugins(void) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.plugin_path = FAKE_PLUGIN_DIR;
  o.log_level = 0;
  parity_context_t *ctx;
  OK(parity_context_create(&o, &ctx));
  return ctx;
}

/* Device 0 of the plugin called `name`. */
static inline parity_device_t *named_device(parity_context_t *ctx, const char *name) {
  uint32_t p;
  OK(parity_context_find_plugin(ctx, name, &p));
  parity_device_t *dev;
  OK(parity_context_open_device(ctx, p, 0, &dev));
  return dev;
}

/* Read all values; asserts they equal `want` exactly (NaN equals NaN). */
static inline void expect_values(parity_tensor_t *t, const double *want, int64_t n) {
  double got[4096];
  cr_assert_leq(n, 4096);
  cr_assert_eq(parity_tensor_numel(t), n);
  OK(parity_tensor_to_f64(t, got, (uint64_t)n));
  for (int64_t i = 0; i < n; i++)
    cr_assert(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])), "element %lld: got %.17g, want %.17g",
              (long long)i, got[i], want[i]);
}

static inline void expect_close(parity_tensor_t *t, const double *want, int64_t n, double tol) {
  double got[4096];
  cr_assert_leq(n, 4096);
  OK(parity_tensor_to_f64(t, got, (uint64_t)n));
  for (int64_t i = 0; i < n; i++)
    cr_assert(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])), "element %lld: got %.17g, want %.17g", (long long)i,
              got[i], want[i]);
}

#endif
