/* Autodiff: the masked-gradient cases, composite graphs, accumulation, no-grad, errors. */
#include <string.h>

#include "core_test.h"

/* y = [0,1,2], mask = (y == 1), loss = sum(where(mask, x, 0)), x = [1,2,3] -> grad [0,1,0]. */
static void masked_where_case(parity_device_t *dev, int32_t dtype) {
  double yv[3] = {0, 1, 2}, xv[3] = {1, 2, 3}, one = 1, zero = 0;
  parity_tensor_t *y = vec(dev, dtype, 3, yv), *x = vec(dev, dtype, 3, xv);
  parity_tensor_t *c1, *z, *mask_plain, *mask, *w, *loss;
  OK(parity_tensor_full(dev, (parity_dtype_t)dtype, 0, NULL, one, &c1));
  OK(parity_tensor_full(dev, (parity_dtype_t)dtype, 0, NULL, zero, &z));
  OK(parity_compare(PARITY_OP_EQ, y, c1, &mask_plain)); /* no gradient anywhere */
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_compare(PARITY_OP_EQ, y, c1, &mask)); /* while a gradient is being taken */
  double want_mask[3] = {0, 1, 0};
  expect_values(mask_plain, want_mask, 3);
  expect_values(mask, want_mask, 3);
  cr_assert_not(parity_tensor_requires_grad(mask), "comparisons never carry gradients");
  OK(parity_where(mask, x, z, &w));
  OK(parity_reduce(PARITY_OP_SUM, w, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 0));
  double want_grad[3] = {0, 1, 0};
  expect_values(parity_tensor_grad(x), want_grad, 3);
  parity_tensor_t *all[] = {y, x, c1, z, mask_plain, mask, w, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

static int supports_f64(parity_device_t *dev) {
  parity_device_info_t info = {.struct_size = sizeof info};
  return parity_device_get_info(dev, &info) == PARITY_STATUS_OK && (info.flags & PARITY_DEVICE_FLAG_FLOAT64);
}

static const char *const backends[] = {"cpu", "opencl", "vulkan", "cuda"};

Test(autograd, mask_under_gradient_routes_only_selected_elements_on_every_backend) {
  int ran = 0;
  for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
    parity_device_t *dev = pt_try_device(backends[b]);
    if (!dev) continue;
    masked_where_case(dev, PARITY_DTYPE_F32);
    if (supports_f64(dev)) masked_where_case(dev, PARITY_DTYPE_F64);
    ran++;
  }
  cr_assert_geq(ran, 1);
}

/* loss = sum(x^3) / count(x > 3), x = 1..9: divides by 6, grad = 3 x^2 / 6. */
static void count_case(parity_device_t *dev, int32_t dt, double tol) {
  parity_tensor_t *x, *three, *cube, *s, *gt, *cnt, *cntf, *loss;
  OK(parity_tensor_arange(dev, (parity_dtype_t)dt, 1, 10, 1, &x));
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_scalar_like(x, 3.0, &three));
  OK(parity_binary(PARITY_OP_POW, x, three, &cube));
  OK(parity_reduce(PARITY_OP_SUM, cube, 0, 0, &s));
  OK(parity_compare(PARITY_OP_GT, x, three, &gt));
  OK(parity_reduce(PARITY_OP_SUM, gt, 0, 0, &cnt));
  cr_assert_eq(parity_tensor_dtype(cnt), PARITY_DTYPE_I64, "a count of bools is an integer");
  double c;
  OK(parity_tensor_to_f64(cnt, &c, 1));
  cr_assert_eq(c, 6);
  OK(parity_cast(cnt, (parity_dtype_t)dt, &cntf));
  OK(parity_binary(PARITY_OP_DIV, s, cntf, &loss));
  OK(parity_backward(loss, NULL, 0));
  double want[9];
  for (int i = 0; i < 9; i++) want[i] = 3.0 * (i + 1) * (i + 1) / 6.0;
  expect_close(parity_tensor_grad(x), want, 9, tol);
  parity_tensor_t *all[] = {x, three, cube, s, gt, cnt, cntf, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(autograd, count_of_comparison_divides_by_six_on_every_backend) {
  for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
    parity_device_t *dev = pt_try_device(backends[b]);
    if (!dev) continue;
    count_case(dev, PARITY_DTYPE_F32, 1e-6);
    if (supports_f64(dev)) count_case(dev, PARITY_DTYPE_F64, 1e-12);
  }
}

Test(autograd, shared_subexpression_and_many_uses_accumulate) {
  parity_device_t *dev = pt_device("cpu");
  double xv[3] = {1, -2, 3};
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 3, xv), *y, *z, *e, *t, *loss;
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_binary(PARITY_OP_MUL, x, x, &y)); /* y = x^2 (x used twice) */
  OK(parity_binary(PARITY_OP_ADD, y, y, &z)); /* z = 2 x^2 (y used twice) */
  OK(parity_unary(PARITY_OP_SIN, x, &e));     /* x used a third time */
  OK(parity_binary(PARITY_OP_ADD, z, e, &t));
  OK(parity_reduce(PARITY_OP_SUM, t, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 0));
  double want[3];
  for (int i = 0; i < 3; i++) want[i] = 4 * xv[i] + cos(xv[i]);
  expect_close(parity_tensor_grad(x), want, 3, 1e-14);
  parity_tensor_t *all[] = {x, y, z, e, t, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(autograd, chain_of_broadcasts_reduces_back_to_each_shape) {
  parity_device_t *dev = pt_device("cpu");
  double av[3] = {1, 2, 3}, bv[2] = {10, 20}, cv[1] = {2};
  int64_t sa[2] = {1, 3}, sb[2] = {2, 1}, sc[1] = {1};
  parity_tensor_t *a = mat(dev, PARITY_DTYPE_F64, 2, sa, av), *b = mat(dev, PARITY_DTYPE_F64, 2, sb, bv),
                  *c = mat(dev, PARITY_DTYPE_F64, 1, sc, cv), *ab, *abc, *loss;
  OK(parity_tensor_set_requires_grad(a, 1));
  OK(parity_tensor_set_requires_grad(b, 1));
  OK(parity_tensor_set_requires_grad(c, 1));
  OK(parity_binary(PARITY_OP_ADD, a, b, &ab));   /* [2,3] */
  OK(parity_binary(PARITY_OP_MUL, ab, c, &abc)); /* [2,3] */
  OK(parity_reduce(PARITY_OP_SUM, abc, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 0));
  double ga[3] = {4, 4, 4}, gb[2] = {6, 6}, gc[1] = {1 + 2 + 3 + 1 + 2 + 3 + 30 + 60};
  expect_values(parity_tensor_grad(a), ga, 3);
  expect_values(parity_tensor_grad(b), gb, 2);
  expect_values(parity_tensor_grad(c), gc, 1);
  cr_assert_eq(parity_tensor_rank(parity_tensor_grad(a)), 2);
  parity_tensor_t *all[] = {a, b, c, ab, abc, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(autograd, views_of_views_carry_gradients_to_the_base) {
  parity_device_t *dev = pt_device("cpu");
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  int64_t s[2] = {3, 4};
  parity_tensor_t *x = mat(dev, PARITY_DTYPE_F64, 2, s, v), *t, *sl, *r, *sq, *loss;
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_transpose(x, 0, 1, &t));    /* [4,3] */
  OK(parity_slice(t, 0, 1, 4, 2, &sl)); /* rows 1 and 3 of the transpose: [2,3] */
  OK(parity_reshape(sl, 1, (int64_t[]){6}, &r));
  OK(parity_unary(PARITY_OP_SQUARE, r, &sq));
  OK(parity_reduce(PARITY_OP_SUM, sq, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 0));
  double want[12] = {0};
  for (int i = 0; i < 3; i++) { /* columns 1 and 3 of x */
    want[i * 4 + 1] = 2 * v[i * 4 + 1];
    want[i * 4 + 3] = 2 * v[i * 4 + 3];
  }
  expect_values(parity_tensor_grad(x), want, 12);
  cr_assert(parity_tensor_shares_storage(x, sl), "slices are views");
  parity_tensor_t *all[] = {x, t, sl, r, sq, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(autograd, gradients_accumulate_across_two_backward_calls) {
  parity_device_t *dev = pt_device("cpu");
  double xv[2] = {1, 2};
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 2, xv), *y, *loss;
  OK(parity_tensor_set_requires_grad(x, 1));
  for (int k = 0; k < 2; k++) {
    OK(parity_unary(PARITY_OP_SQUARE, x, &y));
    OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &loss));
    OK(parity_backward(loss, NULL, 0));
    parity_tensor_release(y);
    parity_tensor_release(loss);
  }
  double want[2] = {4, 8};
  expect_values(parity_tensor_grad(x), want, 2);
  parity_tensor_zero_grad(x);
  cr_assert_null(parity_tensor_grad(x));
  parity_tensor_release(x);
}

Test(autograd, no_grad_scope_and_detach_record_nothing) {
  parity_device_t *dev = pt_device("cpu");
  double xv[2] = {1, 2};
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 2, xv), *y, *d, *z;
  OK(parity_tensor_set_requires_grad(x, 1));
  int prev = parity_grad_mode_set(0);
  OK(parity_unary(PARITY_OP_EXP, x, &y));
  parity_grad_mode_set(prev);
  cr_assert_not(parity_tensor_requires_grad(y));
  OK(parity_detach(x, &d));
  OK(parity_unary(PARITY_OP_EXP, d, &z));
  cr_assert_not(parity_tensor_requires_grad(z));
  cr_assert(parity_tensor_shares_storage(x, d));
  cr_assert_neq(parity_backward(z, NULL, 0), PARITY_STATUS_OK);
  parity_tensor_t *all[] = {x, y, d, z};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(autograd, argmax_and_integer_results_never_require_grad) {
  parity_device_t *dev = pt_device("cpu");
  double xv[4] = {1, 5, 5, 2};
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 4, xv), *am, *xi;
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_reduce(PARITY_OP_ARGMAX, x, 0, 0, &am));
  cr_assert_not(parity_tensor_requires_grad(am));
  double want = 1;
  expect_values(am, &want, 1);
  OK(parity_cast(x, PARITY_DTYPE_I32, &xi));
  cr_assert_not(parity_tensor_requires_grad(xi));
  cr_assert_neq(parity_tensor_set_requires_grad(xi, 1), PARITY_STATUS_OK);
  cr_assert(strstr(parity_last_error(), "only floating tensors"), "%s", parity_last_error());
  parity_tensor_release(x);
  parity_tensor_release(am);
  parity_tensor_release(xi);
}

Test(autograd, errors_name_the_op_and_shapes) {
  parity_device_t *dev = pt_device("cpu");
  double v[6] = {1, 2, 3, 4, 5, 6};
  parity_tensor_t *a = vec(dev, PARITY_DTYPE_F64, 3, v), *b = vec(dev, PARITY_DTYPE_F64, 2, v), *out = (void *)1;
  cr_assert_eq(parity_binary(PARITY_OP_ADD, a, b, &out), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_null(out, "*out is NULL after a failure");
  cr_assert(strstr(parity_last_error(), "add: shapes f64[3] and f64[2] cannot be broadcast"), "%s",
            parity_last_error());
  int64_t s23[2] = {2, 3}, s22[2] = {2, 2};
  parity_tensor_t *m = mat(dev, PARITY_DTYPE_F64, 2, s23, v), *n = mat(dev, PARITY_DTYPE_F64, 2, s22, v);
  cr_assert_eq(parity_matmul(m, n, &out), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "matmul: f64[2,3] x f64[2,2]"), "%s", parity_last_error());
  parity_tensor_t *i32;
  OK(parity_cast(a, PARITY_DTYPE_I32, &i32));
  cr_assert_eq(parity_unary(PARITY_OP_EXP, i32, &out), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "exp: needs a floating dtype, got i32"), "%s", parity_last_error());
  parity_tensor_t *f32 = vec(dev, PARITY_DTYPE_F32, 3, v);
  cr_assert_eq(parity_conv2d(a, f32, NULL, NULL, &out), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "dtypes differ"), "%s", parity_last_error());
  /* inputs untouched */
  double want[3] = {1, 2, 3};
  expect_values(a, want, 3);
  parity_tensor_t *all[] = {a, b, m, n, i32, f32};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(autograd, backward_on_a_non_scalar_needs_a_seed) {
  parity_device_t *dev = pt_device("cpu");
  double v[3] = {1, 2, 3};
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 3, v), *y, *seed;
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_unary(PARITY_OP_SQUARE, x, &y));
  cr_assert_eq(parity_backward(y, NULL, 0), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "not a scalar; pass a seed"), "%s", parity_last_error());
  seed = vec(dev, PARITY_DTYPE_F64, 3, v);
  OK(parity_backward(y, seed, 0));
  double want[3] = {2, 8, 18};
  expect_values(parity_tensor_grad(x), want, 3);
  parity_tensor_release(x);
  parity_tensor_release(y);
  parity_tensor_release(seed);
}

Test(autograd, backward_twice_through_a_freed_graph_is_an_error) {
  parity_device_t *dev = pt_device("cpu");
  double v[2] = {1, 2};
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 2, v), *y, *loss;
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_unary(PARITY_OP_EXP, x, &y));
  OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &loss));
  OK(parity_backward(loss, NULL, 1)); /* retained: a second pass works */
  OK(parity_backward(loss, NULL, 0));
  cr_assert_eq(parity_backward(loss, NULL, 0), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(parity_last_error(), "was freed by an earlier backward"), "%s", parity_last_error());
  double want[2] = {2 * exp(1.0), 2 * exp(2.0)};
  expect_close(parity_tensor_grad(x), want, 2, 1e-15);
  parity_tensor_release(x);
  parity_tensor_release(y);
  parity_tensor_release(loss);
}

Test(autograd, tensors_from_two_devices_are_rejected) {
  parity_context_t *ctx = context_with_fake_plugins();
  parity_device_t *cpu = named_device(ctx, "cpu"), *fake = named_device(ctx, "fakenormal");
  double v[2] = {1, 2};
  parity_tensor_t *a = vec(cpu, PARITY_DTYPE_F32, 2, v), *b = vec(fake, PARITY_DTYPE_F32, 2, v), *out = NULL;
  cr_assert_eq(parity_binary(PARITY_OP_ADD, a, b, &out), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "add: tensors live on different devices ('cpu' device 0 and 'fakenormal'"),
            "%s", parity_last_error());
  cr_assert_null(out);
  parity_tensor_release(a);
  parity_tensor_release(b);
  parity_context_destroy(ctx);
}

Test(autograd, a_second_backward_through_a_freed_graph_names_the_call_the_user_made) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *t, *s;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F64, 2, (int64_t[]){2, 3}, &x));
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_transpose(x, 0, 1, &t));
  OK(parity_reduce(PARITY_OP_SUM, t, 3, 0, &s));
  OK(parity_backward(s, NULL, 0));
  cr_assert_eq(parity_backward(s, NULL, 0), PARITY_STATUS_FAILED_PRECONDITION);
  cr_assert(strstr(parity_last_error(), "through transpose (its permute step) was freed"), "%s", parity_last_error());
  parity_tensor_release(s);
  parity_tensor_release(t);
  parity_tensor_release(x);
}
