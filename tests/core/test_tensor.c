/* Tensor creation, host transfer, views, promotion and the counter-based generator. */
#include <string.h>

#include "core_test.h"

Test(tensor, creation_helpers_fill_the_right_values) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *z, *o, *f, *r, *e;
  int64_t s[2] = {2, 3};
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, s, &z));
  OK(parity_tensor_ones(dev, PARITY_DTYPE_I64, 2, s, &o));
  OK(parity_tensor_full(dev, PARITY_DTYPE_BF16, 2, s, 1.5, &f));
  OK(parity_tensor_arange(dev, PARITY_DTYPE_I32, 5, -1, -2, &r));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F64, 2, (int64_t[]){0, 4}, &e));
  double zw[6] = {0}, ow[6] = {1, 1, 1, 1, 1, 1}, fw[6] = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5}, rw[3] = {5, 3, 1};
  expect_values(z, zw, 6);
  expect_values(o, ow, 6);
  expect_values(f, fw, 6);
  expect_values(r, rw, 3);
  cr_assert_eq(parity_tensor_numel(e), 0);
  cr_assert_eq(parity_tensor_dtype(o), PARITY_DTYPE_I64);
  cr_assert_eq(parity_tensor_dim(z, 1), 3);
  parity_tensor_t *all[] = {z, o, f, r, e};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(tensor, bad_creation_arguments_are_errors) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *t = (void *)1;
  cr_assert_eq(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){2, -1}, &t), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "negative size -1 on axis 1"), "%s", parity_last_error());
  cr_assert_eq(parity_tensor_zeros(dev, (parity_dtype_t)99, 1, (int64_t[]){2}, &t), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_tensor_arange(dev, PARITY_DTYPE_F32, 0, 1, 0, &t), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, &t),
               PARITY_STATUS_INVALID_ARGUMENT);
}

Test(tensor, strided_views_read_back_in_logical_order) {
  parity_device_t *dev = pt_device("cpu");
  double v[6] = {0, 1, 2, 3, 4, 5};
  parity_tensor_t *x = mat(dev, PARITY_DTYPE_F32, 2, (int64_t[]){2, 3}, v), *t, *c, *s;
  OK(parity_transpose(x, 0, 1, &t));
  cr_assert_not(parity_tensor_is_contiguous(t));
  double want[6] = {0, 3, 1, 4, 2, 5};
  expect_values(t, want, 6);
  OK(parity_contiguous(t, &c));
  cr_assert(parity_tensor_is_contiguous(c));
  cr_assert_not(parity_tensor_shares_storage(c, x));
  expect_values(c, want, 6);
  OK(parity_slice(x, 1, 0, 3, 2, &s));
  double ws[4] = {0, 2, 3, 5};
  expect_values(s, ws, 4);
  cr_assert(parity_tensor_shares_storage(s, x));
  parity_tensor_t *all[] = {x, t, c, s};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(tensor, binary_ops_promote_dtypes) {
  parity_device_t *dev = pt_device("cpu");
  double v[2] = {1, 2};
  parity_tensor_t *i = vec(dev, PARITY_DTYPE_I32, 2, v), *f = vec(dev, PARITY_DTYPE_F32, 2, v),
                  *h = vec(dev, PARITY_DTYPE_F16, 2, v), *b = vec(dev, PARITY_DTYPE_BF16, 2, v),
                  *l = vec(dev, PARITY_DTYPE_I64, 2, v), *o1, *o2, *o3, *bl, *o4;
  OK(parity_binary(PARITY_OP_ADD, i, f, &o1));
  cr_assert_eq(parity_tensor_dtype(o1), PARITY_DTYPE_F32);
  OK(parity_binary(PARITY_OP_MUL, h, b, &o2));
  cr_assert_eq(parity_tensor_dtype(o2), PARITY_DTYPE_F32, "f16 with bf16 promotes to f32");
  OK(parity_binary(PARITY_OP_SUB, i, l, &o3));
  cr_assert_eq(parity_tensor_dtype(o3), PARITY_DTYPE_I64);
  double w2[2] = {1, 4};
  expect_values(o2, w2, 2);
  OK(parity_cast(i, PARITY_DTYPE_BOOL, &bl));
  cr_assert_eq(parity_binary(PARITY_OP_ADD, bl, bl, &o4), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "arithmetic on bool"), "%s", parity_last_error());
  parity_tensor_t *all[] = {i, f, h, b, l, o1, o2, o3, bl};
  for (size_t k = 0; k < sizeof all / sizeof *all; k++) parity_tensor_release(all[k]);
}

Test(tensor, reshape_infers_one_axis_and_rejects_wrong_counts) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *r, *bad = NULL;
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){4, 6}, &x));
  OK(parity_reshape(x, 3, (int64_t[]){2, -1, 3}, &r));
  cr_assert_eq(parity_tensor_dim(r, 1), 4);
  cr_assert(parity_tensor_shares_storage(x, r));
  cr_assert_eq(parity_reshape(x, 2, (int64_t[]){5, 5}, &bad), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "cannot view f32[4,6] (24 elements)"), "%s", parity_last_error());
  parity_tensor_release(x);
  parity_tensor_release(r);
}

Test(random, same_seed_and_offset_give_the_same_stream) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *a, *b, *c, *n;
  OK(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F64, 1, (int64_t[]){8}, 0, 1, 42, 0, &a));
  OK(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F64, 1, (int64_t[]){4}, 0, 1, 42, 4, &b));
  OK(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F64, 1, (int64_t[]){8}, 0, 1, 43, 0, &c));
  double av[8], bv[4], cv[8];
  OK(parity_tensor_to_f64(a, av, 8));
  OK(parity_tensor_to_f64(b, bv, 4));
  OK(parity_tensor_to_f64(c, cv, 8));
  cr_assert_eq(memcmp(av + 4, bv, sizeof bv), 0, "offset continues the stream");
  cr_assert_neq(memcmp(av, cv, sizeof av), 0, "another seed, another stream");
  for (int i = 0; i < 8; i++) cr_assert(av[i] > 0 && av[i] < 1);
  OK(parity_tensor_rand_normal(dev, PARITY_DTYPE_F64, 1, (int64_t[]){4096}, 2, 3, 1, 0, &n));
  static double nv[4096];
  OK(parity_tensor_to_f64(n, nv, 4096));
  double mean = 0, var = 0;
  for (int i = 0; i < 4096; i++) mean += nv[i] / 4096;
  for (int i = 0; i < 4096; i++) var += (nv[i] - mean) * (nv[i] - mean) / 4095;
  cr_assert(fabs(mean - 2) < 0.2 && fabs(sqrt(var) - 3) < 0.2, "mean %g std %g", mean, sqrt(var));
  parity_tensor_t *all[] = {a, b, c, n};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(random, philox_matches_the_published_test_vector) {
  /* Philox4x32-10 known-answer test (Random123 kat_vectors): counter 0, key 0 ->
   * 6627e8d5 e169c58d bc57ac4c 9b00dbd8. Uniforms are (word + 0.5) / 2^32. */
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *u;
  OK(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F64, 1, (int64_t[]){4}, 0, 1, 0, 0, &u));
  double v[4];
  OK(parity_tensor_to_f64(u, v, 4));
  const double words[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  for (int i = 0; i < 4; i++) cr_assert_eq(v[i], (words[i] + 0.5) * 0x1p-32, "word %d", i);
  parity_tensor_release(u);
}
