/* Bad input through the public API (issue 12's reproductions): each call gets a clean status and
 * a message naming the problem, nothing crashes, hangs or allocates absurd amounts, and the
 * caller's data is left as it was. */
#include <string.h>

#include "core_test.h"

#define FAILS(expr, status, needle)                                                                             \
  do {                                                                                                          \
    parity_status_t st_ = (expr);                                                                               \
    cr_assert_eq(st_, (status), "%s gave %s: %s", #expr, parity_status_string(st_), parity_last_error());       \
    cr_assert(strstr(parity_last_error(), (needle)), "%s: message '%s' lacks '%s'", #expr, parity_last_error(), \
              (needle));                                                                                        \
  } while (0)

static parity_tensor_t *ones(parity_device_t *dev, uint32_t rank, const int64_t *shape) {
  parity_tensor_t *t;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F32, rank, shape, &t));
  return t;
}

Test(bad_views, reshape_to_a_shape_whose_product_overflows_is_refused) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = ones(dev, 1, (int64_t[]){1}), *y = (parity_tensor_t *)1;
  FAILS(parity_reshape(x, 2, (int64_t[]){7, 0x6DB6DB6DB6DB6DB7}, &y), PARITY_STATUS_INVALID_ARGUMENT, "2^48");
  cr_assert_null(y);
  parity_tensor_release(x);
}

Test(bad_views, reshape_of_an_empty_tensor_to_a_huge_shape_is_refused) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = ones(dev, 1, (int64_t[]){0}), *y;
  FAILS(parity_reshape(x, 2, (int64_t[]){1ll << 32, 1ll << 32}, &y), PARITY_STATUS_INVALID_ARGUMENT, "2^48");
  parity_tensor_release(x);
}

Test(bad_views, expand_to_a_negative_size_is_refused) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = ones(dev, 1, (int64_t[]){1}), *y;
  FAILS(parity_expand(x, 1, (int64_t[]){-5}, &y), PARITY_STATUS_INVALID_ARGUMENT, "negative size -5");
  parity_tensor_release(x);
}

Test(bad_views, expand_past_the_element_limit_is_refused_not_summed_to_zero, .timeout = 10) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = ones(dev, 1, (int64_t[]){1}), *y;
  FAILS(parity_expand(x, 2, (int64_t[]){1ll << 32, 1ll << 32}, &y), PARITY_STATUS_INVALID_ARGUMENT, "2^48");
  FAILS(parity_expand(x, 2, (int64_t[]){1ll << 31, 1ll << 31}, &y), PARITY_STATUS_INVALID_ARGUMENT, "2^48");
  parity_tensor_release(x);
}

Test(bad_views, slice_with_a_huge_step_takes_one_element) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F64, 4, (double[]){5, 6, 7, 8}), *y;
  OK(parity_slice(x, 0, 1, 4, INT64_MAX, &y));
  cr_assert_eq(parity_tensor_numel(y), 1);
  expect_values(y, (double[]){6}, 1);
  parity_tensor_release(y);
  OK(parity_slice(x, 0, 4, 4, INT64_MAX, &y));
  cr_assert_eq(parity_tensor_numel(y), 0);
  parity_tensor_release(y);
  parity_tensor_release(x);
}

Test(bad_views, creation_with_an_overflowing_shape_is_refused) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *t = (parity_tensor_t *)1;
  FAILS(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){1ll << 40, 1ll << 40}, &t),
        PARITY_STATUS_INVALID_ARGUMENT, "2^48");
  cr_assert_null(t);
  FAILS(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 2, (int64_t[]){0, 1ll << 62}, &t), PARITY_STATUS_INVALID_ARGUMENT,
        "2^48");
}

Test(bad_null, accessors_answer_null_with_neutral_values) {
  cr_assert_eq(parity_tensor_numel(NULL), 0);
  cr_assert_eq(parity_tensor_rank(NULL), 0);
  cr_assert_eq(parity_tensor_dim(NULL, 0), 0);
  cr_assert_eq(parity_tensor_dtype(NULL), PARITY_DTYPE_INVALID);
  cr_assert_null(parity_tensor_shape(NULL));
  cr_assert_null(parity_tensor_strides(NULL));
  cr_assert_null(parity_tensor_device(NULL));
  cr_assert_eq(parity_tensor_is_contiguous(NULL), 0);
  cr_assert_eq(parity_tensor_shares_storage(NULL, NULL), 0);
  cr_assert_null(parity_context_backend_request(NULL));
  cr_assert_str_eq(parity_context_available(NULL), "no context (NULL)");
  cr_assert_null(parity_device_plugin_name(NULL));
  cr_assert_null(parity_device_context(NULL));
  cr_assert_eq(parity_context_plugin_count(NULL), 0);
}

Test(bad_null, to_f64_into_null_is_an_error) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = ones(dev, 1, (int64_t[]){4});
  FAILS(parity_tensor_to_f64(x, NULL, 4), PARITY_STATUS_INVALID_ARGUMENT, "dst is NULL");
  parity_tensor_release(x);
}

/* ---- parity_device_run checks every operand against its buffer and device ---------------- */
static parity_op_desc_t neg_desc(parity_tensor_desc_t *x, parity_tensor_desc_t *y, parity_buffer_t *a,
                                 parity_buffer_t *b, int64_t n) {
  *x = (parity_tensor_desc_t){.struct_size = sizeof *x,
                              .dtype = PARITY_DTYPE_F32,
                              .rank = 1,
                              .shape = {n},
                              .strides = {1},
                              .buffer = parity_buffer_handle(a)};
  *y = *x;
  y->buffer = parity_buffer_handle(b);
  return (parity_op_desc_t){.struct_size = sizeof(parity_op_desc_t),
                            .op = PARITY_OP_NEG,
                            .direction = PARITY_DIRECTION_FORWARD,
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .inputs = {x},
                            .outputs = {y}};
}

Test(bad_run, an_operand_larger_than_its_buffer_is_refused_before_the_plugin_runs) {
  parity_device_t *dev = pt_device("cpu");
  parity_buffer_t *a, *b;
  OK(parity_buffer_alloc(dev, 16, &a));
  OK(parity_buffer_alloc(dev, 1 << 20, &b));
  float canary[4] = {1, 2, 3, 4}, got[4];
  OK(parity_buffer_write(a, 0, canary, sizeof canary));
  parity_tensor_desc_t x, y;
  parity_op_desc_t d = neg_desc(&x, &y, b, a, 1000); /* writes 4000 bytes into a 16-byte buffer */
  FAILS(parity_device_run(dev, &d), PARITY_STATUS_OUT_OF_RANGE, "output 0 reaches bytes [0, 4000) of a 16-byte buffer");
  OK(parity_buffer_read(a, 0, got, sizeof got));
  cr_assert_eq(memcmp(got, canary, sizeof got), 0);
  x.offset_bytes = (1 << 20) - 8;
  d = neg_desc(&x, &y, b, b, 4);
  x.offset_bytes = (1 << 20) - 8;
  FAILS(parity_device_run(dev, &d), PARITY_STATUS_OUT_OF_RANGE, "input 0 reaches bytes");
  parity_buffer_free(a);
  parity_buffer_free(b);
}

Test(bad_run, a_buffer_of_another_device_is_refused) {
  parity_device_t *dev = pt_device("cpu");
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "cpu";
  o.log_level = 0;
  parity_context_t *other;
  OK(parity_context_create(&o, &other));
  parity_device_t *dev2;
  OK(parity_context_default_device(other, &dev2));
  cr_assert_neq(dev, dev2);
  parity_buffer_t *a, *b;
  OK(parity_buffer_alloc(dev2, 64, &a));
  OK(parity_buffer_alloc(dev, 64, &b));
  parity_tensor_desc_t x, y;
  parity_op_desc_t d = neg_desc(&x, &y, a, b, 4);
  FAILS(parity_device_run(dev, &d), PARITY_STATUS_INVALID_ARGUMENT,
        "input 0's buffer is not a live buffer of this device");
  parity_buffer_free(a);
  parity_buffer_free(b);
  parity_context_destroy(other);
}

Test(bad_run, a_freed_buffer_is_refused) {
  parity_device_t *dev = pt_device("cpu");
  parity_buffer_t *a, *b;
  OK(parity_buffer_alloc(dev, 64, &a));
  OK(parity_buffer_alloc(dev, 64, &b));
  parity_tensor_desc_t x, y;
  parity_op_desc_t d = neg_desc(&x, &y, a, b, 4);
  parity_buffer_free(b);
  FAILS(parity_device_run(dev, &d), PARITY_STATUS_INVALID_ARGUMENT, "output 0's buffer is not a live buffer");
  parity_buffer_free(a);
}

/* Issue 38, item 8: parameters that used to be accepted silently (a NaN learning rate trains to
 * NaN, rand_uniform(5, 1) draws from [1, 5] reversed, a negative eps takes a square root of a
 * negative variance) are refused with the value named, and nothing is created. */
Test(bad_params, hyper_parameters_out_of_their_domain_are_refused) {
  parity_device_t *dev = pt_device("cpu");
  int64_t shape[2] = {2, 3};
  parity_tensor_t *x = ones(dev, 2, shape), *t = (parity_tensor_t *)1;
  FAILS(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, 2, shape, 5, 1, 0, 0, &t), PARITY_STATUS_INVALID_ARGUMENT,
        "low 5 and high 1 must be finite with low <= high");
  cr_assert_null(t);
  FAILS(parity_tensor_rand_uniform(dev, PARITY_DTYPE_F32, 2, shape, 0, INFINITY, 0, 0, &t),
        PARITY_STATUS_INVALID_ARGUMENT, "high inf");
  FAILS(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, shape, 0, -1, 0, 0, &t), PARITY_STATUS_INVALID_ARGUMENT,
        "stddev -1");
  FAILS(parity_tensor_rand_normal(dev, PARITY_DTYPE_F32, 2, shape, NAN, 1, 0, 0, &t), PARITY_STATUS_INVALID_ARGUMENT,
        "mean nan");
  FAILS(parity_layer_norm(x, 1, NULL, NULL, -1, &t), PARITY_STATUS_INVALID_ARGUMENT, "layer_norm: eps -1");
  FAILS(parity_layer_norm(x, 1, NULL, NULL, NAN, &t), PARITY_STATUS_INVALID_ARGUMENT, "layer_norm: eps nan");
  FAILS(parity_batch_norm(x, NULL, NULL, NULL, NULL, 1, 0.1, -1e-5, &t), PARITY_STATUS_INVALID_ARGUMENT,
        "batch_norm: eps -1e-05");
  FAILS(parity_batch_norm(x, NULL, NULL, NULL, NULL, 1, 2, 1e-5, &t), PARITY_STATUS_INVALID_ARGUMENT, "momentum 2");
  OK(parity_tensor_set_requires_grad(x, 1));
  parity_optimizer_t *o = (parity_optimizer_t *)1;
  FAILS(parity_sgd_create(&x, 1, NAN, 0, &o), PARITY_STATUS_INVALID_ARGUMENT, "sgd_create: lr nan");
  cr_assert_null(o);
  FAILS(parity_sgd_create(&x, 1, -0.1, 0, &o), PARITY_STATUS_INVALID_ARGUMENT, "lr -0.1");
  FAILS(parity_sgd_create(&x, 1, 0.1, -0.5, &o), PARITY_STATUS_INVALID_ARGUMENT, "momentum -0.5");
  FAILS(parity_adam_create(&x, 1, 1e-3, 1, 0.999, 1e-8, &o), PARITY_STATUS_INVALID_ARGUMENT, "beta1 1 and beta2 0.999");
  FAILS(parity_adam_create(&x, 1, 1e-3, 0.9, 0.999, 0, &o), PARITY_STATUS_INVALID_ARGUMENT, "eps 0");
  FAILS(parity_adam_create(&x, 1, INFINITY, 0.9, 0.999, 1e-8, &o), PARITY_STATUS_INVALID_ARGUMENT, "lr inf");
  OK(parity_sgd_create(&x, 1, 0.1, 0.9, &o));
  FAILS(parity_optimizer_set_lr(o, NAN), PARITY_STATUS_INVALID_ARGUMENT, "optimizer_set_lr: lr nan");
  parity_optimizer_destroy(o);
  parity_tensor_release(x);
}

/* Issue 37, item 7: an error inside a composite names the call the user made first. */
Test(bad_params, a_composite_names_the_call_not_only_its_inner_op) {
  parity_device_t *dev = pt_device("cpu");
  int64_t s1[2] = {2, 3}, s2[2] = {2, 4};
  parity_tensor_t *a = ones(dev, 2, s1), *b = ones(dev, 2, s2), *l = NULL;
  FAILS(parity_mse_loss(a, b, &l), PARITY_STATUS_INVALID_ARGUMENT, "mse_loss: sub: shapes f32[2,3] and f32[2,4]");
  cr_assert_null(l);
  parity_tensor_release(b);
  parity_tensor_release(a);
}
