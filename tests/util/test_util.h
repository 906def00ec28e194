/* test_util.h — small helpers for Criterion tests: open a backend, make tensors from doubles,
 * run one op, read results back as doubles. Failures abort the test with cr_assert. */
#ifndef PARITY_TEST_UTIL_H
#define PARITY_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>

#include "parity/device.h"
#include "parity_support/desc.h"
#include "parity_support/dtype.h"
#include "parity_support/ops.h"

/* A new context of the caller's that searches only the build tree for plugins and logs nothing
 * (environment changes made before it take effect); asserts that it is created. */
parity_context_t *pt_fresh_context(void);
/* The first device of the plugin named `backend` ("cpu", "opencl", ...) from a per-process
 * context that searches only the build tree. NULL (not an assert) when the backend is absent. */
parity_device_t *pt_try_device(const char *backend);
/* Same, but asserts the backend exists. */
parity_device_t *pt_device(const char *backend);

/* A device tensor and its descriptor. */
typedef struct pt_tensor {
  parity_tensor_desc_t desc;
  parity_buffer_t *buf;
} pt_tensor;

/* Contiguous tensor of `dtype` holding values (converted with psup_store_f64; NULL = zeros). */
pt_tensor pt_tensor_new(parity_device_t *dev, int32_t dtype, uint32_t rank, const int64_t *shape, const double *values);
/* Read all elements (following the descriptor's strides) as doubles into out. */
void pt_tensor_read(const pt_tensor *t, double *out);
void pt_tensor_free(pt_tensor *t);

/* Run one op; inputs/outputs may contain NULL (optional operands). params may be NULL. */
parity_status_t pt_run(parity_device_t *dev, int32_t op, int32_t direction, const pt_tensor *const *inputs,
                       uint32_t nin, const pt_tensor *const *outputs, uint32_t nout, const parity_op_params_t *params);

/* Units in the last place between a and b at the precision of dtype (0 when both NaN or equal). */
double pt_ulp_diff(double a, double b, int32_t dtype);

/* A new folder "/tmp/parity-<tag>-XXXXXX" (asserted), its path written to dir (n bytes). */
void pt_temp_dir(const char *tag, char *dir, size_t n);
/* Remove dir and everything under it; asserts that it is gone, so a test that leaves files in
 * its folder fails rather than filling /tmp run by run. */
void pt_remove_tree(const char *dir);

/* x w^T with w^T a transposed view must give the bits of x times w^T copied contiguous, f32 and
 * f64, at sizes that cross every plugin's column blocks, vector steps and block sums: the layout
 * of b is never allowed to change the sum's order (asserted, naming the first element that
 * differs). */
void pt_check_transposed_b_bits(parity_device_t *dev);

#endif
