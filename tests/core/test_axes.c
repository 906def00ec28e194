/* Negative axes (-1 = last) everywhere an axis is taken, by the one rule of psup_axis: each
 * function given a negative axis gives exactly what it gives for the same positive axis, and an
 * axis out of [-rank, rank) is INVALID_ARGUMENT with the valid range in the message. */
#include <string.h>

#include "core_test.h"

static parity_tensor_t *x234(parity_device_t *dev) {
  double v[24];
  for (int i = 0; i < 24; i++) v[i] = i * 0.5 - 3;
  return mat(dev, PARITY_DTYPE_F64, 3, (int64_t[]){2, 3, 4}, v);
}

static void same(parity_tensor_t *a, parity_tensor_t *b) {
  cr_assert_eq(parity_tensor_rank(a), parity_tensor_rank(b));
  for (uint32_t i = 0; i < parity_tensor_rank(a); i++)
    cr_assert_eq(parity_tensor_shape(a)[i], parity_tensor_shape(b)[i]);
  double va[64], vb[64];
  int64_t n = parity_tensor_numel(a);
  cr_assert_leq(n, 64);
  OK(parity_tensor_to_f64(a, va, (uint64_t)n));
  OK(parity_tensor_to_f64(b, vb, (uint64_t)n));
  cr_assert_eq(memcmp(va, vb, (size_t)n * sizeof *va), 0);
  parity_tensor_release(a);
  parity_tensor_release(b);
}

Test(axes, negative_axes_count_from_the_end_in_every_function) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = x234(dev), *a = NULL, *b = NULL;
  cr_assert_eq(parity_tensor_dim(x, -1), 4);
  cr_assert_eq(parity_tensor_dim(x, -3), 2);
  cr_assert_eq(parity_tensor_dim(x, -4), 0);
  OK(parity_transpose(x, -1, -3, &a));
  OK(parity_transpose(x, 2, 0, &b));
  same(a, b);
  OK(parity_permute(x, (int32_t[]){-1, 0, -2}, &a));
  OK(parity_permute(x, (int32_t[]){2, 0, 1}, &b));
  same(a, b);
  OK(parity_slice(x, -1, 1, 4, 2, &a));
  OK(parity_slice(x, 2, 1, 4, 2, &b));
  same(a, b);
  OK(parity_softmax(PARITY_OP_LOG_SOFTMAX, x, -2, &a));
  OK(parity_softmax(PARITY_OP_LOG_SOFTMAX, x, 1, &b));
  same(a, b);
  OK(parity_unsqueeze(x, -1, &a)); /* a new last axis: [2,3,4,1] */
  OK(parity_unsqueeze(x, 3, &b));
  cr_assert_eq(parity_tensor_shape(a)[3], 1);
  same(a, b);
  OK(parity_unsqueeze(x, -4, &a)); /* a new first axis */
  OK(parity_unsqueeze(x, 0, &b));
  same(a, b);
  parity_tensor_t *u = NULL;
  OK(parity_unsqueeze(x, 1, &u));
  OK(parity_squeeze(u, -3, &a));
  OK(parity_squeeze(u, 1, &b));
  same(a, b);
  OK(parity_reduce_axes(PARITY_OP_SUM, x, 2, (int32_t[]){-1, 0}, 0, &a));
  OK(parity_reduce(PARITY_OP_SUM, x, 0x5, 0, &b));
  same(a, b);
  OK(parity_reduce_axes(PARITY_OP_ARGMAX, x, 1, (int32_t[]){-2}, 1, &a));
  OK(parity_reduce(PARITY_OP_ARGMAX, x, 0x2, 1, &b));
  same(a, b);
  OK(parity_reduce_axes(PARITY_OP_MAX, x, 0, NULL, 0, &a)); /* no axes: all */
  OK(parity_reduce(PARITY_OP_MAX, x, 0, 0, &b));
  same(a, b);
  parity_tensor_release(u);
  parity_tensor_release(x);
}

#define REFUSED_WITH(expr, text)                                                                                   \
  do {                                                                                                             \
    cr_assert_eq((expr), PARITY_STATUS_INVALID_ARGUMENT, "%s", #expr);                                             \
    cr_assert(strstr(parity_last_error(), text), "%s: message '%s' lacks '%s'", #expr, parity_last_error(), text); \
  } while (0)

Test(axes, axes_out_of_range_are_refused_with_the_valid_range) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = x234(dev), *y = NULL;
  REFUSED_WITH(parity_transpose(x, -4, 0, &y), "valid: -3 to 2");
  cr_assert_null(y);
  REFUSED_WITH(parity_transpose(x, 0, 3, &y), "axis 3 is out of range for rank 3");
  REFUSED_WITH(parity_permute(x, (int32_t[]){0, 1, -3}, &y), "appears twice");
  REFUSED_WITH(parity_slice(x, 3, 0, 1, 1, &y), "valid: -3 to 2");
  REFUSED_WITH(parity_softmax(PARITY_OP_SOFTMAX, x, -4, &y), "softmax: axis -4");
  REFUSED_WITH(parity_unsqueeze(x, 4, &y), "valid: -4 to 3");
  REFUSED_WITH(parity_unsqueeze(x, -5, &y), "valid: -4 to 3");
  REFUSED_WITH(parity_squeeze(x, -1, &y), "not a size-1 axis");
  REFUSED_WITH(parity_reduce_axes(PARITY_OP_SUM, x, 2, (int32_t[]){-1, 2}, 0, &y), "named twice");
  REFUSED_WITH(parity_reduce_axes(PARITY_OP_SUM, x, 1, (int32_t[]){INT32_MIN}, 0, &y), "out of range");
  REFUSED_WITH(parity_reduce_axes(PARITY_OP_SUM, x, 1, NULL, 0, &y), "axes is NULL");
  cr_assert_null(y);
  parity_tensor_t *s = NULL;
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 0, NULL, &s));
  REFUSED_WITH(parity_softmax(PARITY_OP_SOFTMAX, s, -1, &y), "rank-0 tensor");
  parity_tensor_release(s);
  parity_tensor_release(x);
}

/* keepdim = 0 drops the reduced axes: the same values, shape and contiguous strides whether the
 * result is reshaped in place (no gradient wanted) or as a view the graph records, and both
 * results go on into further ops and (with a gradient) back through the reduction. */
Test(axes, reductions_without_keepdim_drop_the_reduced_axes_with_or_without_a_gradient) {
  parity_device_t *dev = pt_device("cpu");
  for (int grad = 0; grad < 2; grad++) {
    parity_tensor_t *x = x234(dev), *y = NULL, *all = NULL, *z = NULL, *loss = NULL;
    OK(parity_tensor_set_requires_grad(x, grad));
    OK(parity_reduce(PARITY_OP_SUM, x, 0x5, 0, &y)); /* [2,3,4] over axes 0 and 2: [3] */
    cr_assert_eq(parity_tensor_rank(y), 1);
    cr_assert_eq(parity_tensor_shape(y)[0], 3);
    cr_assert_eq(parity_tensor_strides(y)[0], 1);
    cr_assert(parity_tensor_is_contiguous(y));
    cr_assert_eq(parity_tensor_requires_grad(y), grad);
    expect_values(y, (double[]){6, 22, 38}, 3);      /* x[a][j][k] = (12a + 4j + k) / 2 - 3: 6 + 16 j */
    OK(parity_reduce(PARITY_OP_MAX, x, 0, 0, &all)); /* every axis: rank 0 */
    cr_assert_eq(parity_tensor_rank(all), 0);
    expect_values(all, (double[]){8.5}, 1);
    OK(parity_binary(PARITY_OP_MUL, y, y, &z)); /* the result in a further op */
    expect_values(z, (double[]){36, 484, 1444}, 3);
    OK(parity_reduce(PARITY_OP_SUM, z, 0, 0, &loss));
    if (grad) { /* d/dx of sum_j y_j^2 = 2 y_j for every element of column j */
      OK(parity_backward(loss, NULL, 0));
      const double ys[3] = {6, 22, 38};
      double g[24];
      OK(parity_tensor_to_f64(parity_tensor_grad(x), g, 24));
      for (int i = 0; i < 24; i++) cr_assert_eq(g[i], 2.0 * ys[(i / 4) % 3], "dx[%d] = %g", i, g[i]);
    }
    parity_tensor_release(loss);
    parity_tensor_release(z);
    parity_tensor_release(all);
    parity_tensor_release(y);
    parity_tensor_release(x);
  }
}
