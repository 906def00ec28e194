/* Every public function given NULL pointers: a status with a message (or, for accessors and
 * destructors, the documented neutral answer), never a crash. Each call also gets a valid device
 * or tensor where one is needed, so only the NULL is wrong. */
#include <string.h>

#include "core_test.h"

#define REFUSED(expr)                                                        \
  do {                                                                       \
    parity_status_t st_ = (expr);                                            \
    cr_assert_neq(st_, PARITY_STATUS_OK, "%s accepted NULL", #expr);         \
    cr_assert(parity_last_error()[0], "%s failed without a message", #expr); \
  } while (0)

Test(null_args, context_and_device_functions) {
  parity_device_t *dev = pt_device("cpu");
  parity_context_t *ctx = parity_device_context(dev);
  REFUSED(parity_context_create(NULL, NULL));
  REFUSED(parity_context_plugin(NULL, 0, NULL));
  REFUSED(parity_context_plugin(ctx, 0, NULL));
  REFUSED(parity_context_device_info(NULL, 0, 0, NULL));
  REFUSED(parity_context_device_info(ctx, 0, 0, NULL));
  REFUSED(parity_context_default_device(NULL, NULL));
  REFUSED(parity_context_default_device(ctx, NULL));
  REFUSED(parity_context_open_device(NULL, 0, 0, NULL));
  REFUSED(parity_context_find_plugin(ctx, NULL, NULL));
  REFUSED(parity_device_get_info(NULL, NULL));
  REFUSED(parity_device_get_info(dev, NULL));
  REFUSED(parity_device_supports(NULL, NULL));
  REFUSED(parity_device_supports(dev, NULL));
  REFUSED(parity_device_run(NULL, NULL));
  REFUSED(parity_device_run(dev, NULL));
  REFUSED(parity_device_synchronize(NULL));
  REFUSED(parity_buffer_alloc(NULL, 8, NULL));
  REFUSED(parity_buffer_alloc(dev, 8, NULL));
  REFUSED(parity_buffer_write(NULL, 0, NULL, 0));
  REFUSED(parity_buffer_read(NULL, 0, NULL, 0));
  REFUSED(parity_buffer_copy(NULL, 0, NULL, 0, 0));
  REFUSED(parity_buffer_fill(NULL, 0, 0, NULL, 1));
  parity_buffer_free(NULL);
  cr_assert_eq(parity_buffer_size(NULL), 0);
  cr_assert_null(parity_buffer_handle(NULL));
  cr_assert_eq(parity_context_note_count(NULL), 0);
  cr_assert_null(parity_context_note(NULL, 0));
  cr_assert_eq(parity_device_verify_count(NULL), 0);
  cr_assert_null(parity_device_verify_report(NULL));
  cr_assert_eq(parity_device_cache_bytes(NULL), 0);
  cr_assert_eq(parity_device_trim_cache(NULL), 0);
  cr_assert_eq(parity_device_index(NULL), 0);
  cr_assert_null(parity_device_backend(NULL));
  parity_context_set_alloc_hook(NULL, NULL, NULL);
  parity_context_destroy(NULL);
  parity_context_options_init(NULL);
}

Test(null_args, tensor_functions) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F32, 2, (double[]){1, 2}), *y = NULL;
  int64_t two = 2;
  REFUSED(parity_tensor_from_host(NULL, PARITY_DTYPE_F32, 1, &two, NULL, &y));
  REFUSED(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, &two, NULL, &y));
  REFUSED(parity_tensor_from_host(dev, PARITY_DTYPE_F32, 1, NULL, NULL, &y));
  REFUSED(parity_tensor_from_f64(dev, PARITY_DTYPE_F32, 1, &two, NULL, &y));
  REFUSED(parity_tensor_full(NULL, PARITY_DTYPE_F32, 1, &two, 0, &y));
  REFUSED(parity_tensor_full(dev, PARITY_DTYPE_F32, 1, &two, 0, NULL));
  REFUSED(parity_tensor_arange(NULL, PARITY_DTYPE_F32, 0, 2, 1, &y));
  REFUSED(parity_tensor_rand_normal(NULL, PARITY_DTYPE_F32, 1, &two, 0, 1, 0, 0, &y));
  REFUSED(parity_tensor_to_host(NULL, NULL, 0));
  REFUSED(parity_tensor_to_host(x, NULL, 8));
  REFUSED(parity_tensor_write(NULL, NULL, 0));
  REFUSED(parity_tensor_write(x, NULL, 8));
  REFUSED(parity_reshape(NULL, 1, &two, &y));
  REFUSED(parity_reshape(x, 1, NULL, &y));
  REFUSED(parity_permute(NULL, NULL, &y));
  REFUSED(parity_permute(x, NULL, &y));
  REFUSED(parity_transpose(NULL, 0, 0, &y));
  REFUSED(parity_slice(NULL, 0, 0, 1, 1, &y));
  REFUSED(parity_expand(x, 1, NULL, &y));
  REFUSED(parity_squeeze(NULL, 0, &y));
  REFUSED(parity_unsqueeze(NULL, 0, &y));
  REFUSED(parity_contiguous(NULL, &y));
  REFUSED(parity_unary(PARITY_OP_NEG, NULL, &y));
  REFUSED(parity_unary(PARITY_OP_NEG, x, NULL));
  REFUSED(parity_leaky_relu(NULL, 0.1, &y));
  REFUSED(parity_binary(PARITY_OP_ADD, x, NULL, &y));
  REFUSED(parity_compare(PARITY_OP_LT, NULL, x, &y));
  REFUSED(parity_where(NULL, x, x, &y));
  REFUSED(parity_cast(NULL, PARITY_DTYPE_F64, &y));
  REFUSED(parity_reduce(PARITY_OP_SUM, NULL, 1, 0, &y));
  REFUSED(parity_matmul(x, NULL, &y));
  REFUSED(parity_conv2d(NULL, NULL, NULL, NULL, &y));
  REFUSED(parity_conv_transpose2d(NULL, NULL, NULL, NULL, &y));
  REFUSED(parity_pool2d(PARITY_OP_MAX_POOL2D, NULL, NULL, &y));
  REFUSED(parity_softmax(PARITY_OP_SOFTMAX, NULL, 0, &y));
  REFUSED(parity_tensor_set_requires_grad(NULL, 1));
  REFUSED(parity_detach(NULL, &y));
  REFUSED(parity_backward(NULL, NULL, 0));
  cr_assert_null(y, "no output was made");
  cr_assert_eq(parity_tensor_requires_grad(NULL), 0);
  cr_assert_null(parity_tensor_grad(NULL));
  parity_tensor_zero_grad(NULL);
  parity_tensor_release(NULL);
  cr_assert_null(parity_tensor_retain(NULL));
  parity_tensor_release(x);
}

Test(null_args, nn_plan_and_optimizer_functions) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x = vec(dev, PARITY_DTYPE_F32, 2, (double[]){1, 2}), *y = NULL;
  REFUSED(parity_scalar_like(NULL, 1, &y));
  REFUSED(parity_mul_scalar(NULL, 2, &y));
  REFUSED(parity_add_scalar(NULL, 2, &y));
  REFUSED(parity_linear(NULL, NULL, NULL, &y));
  REFUSED(parity_linear(x, NULL, NULL, &y));
  REFUSED(parity_bilinear(NULL, NULL, NULL, NULL, &y));
  REFUSED(parity_layer_norm(NULL, 0, NULL, NULL, 1e-5, &y));
  REFUSED(parity_batch_norm(NULL, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, &y));
  REFUSED(parity_dropout(NULL, 0.5, 1, 0, 0, &y));
  REFUSED(parity_multi_head_attention(NULL, NULL, NULL, NULL, NULL, &y));
  REFUSED(parity_mse_loss(NULL, x, &y));
  REFUSED(parity_cross_entropy(x, NULL, &y));
  parity_optimizer_t *opt = NULL;
  REFUSED(parity_sgd_create(NULL, 1, 0.1, 0, &opt));
  REFUSED(parity_adam_create(NULL, 1, 0.1, 0.9, 0.999, 1e-8, &opt));
  REFUSED(parity_sgd_create(&x, 1, 0.1, 0, NULL));
  REFUSED(parity_optimizer_step(NULL));
  parity_optimizer_zero_grad(NULL);
  parity_optimizer_destroy(NULL);
  REFUSED(parity_plan_begin(NULL, NULL));
  REFUSED(parity_plan_end(NULL));
  REFUSED(parity_plan_replay(NULL));
  cr_assert_eq(parity_plan_command_count(NULL), 0);
  parity_plan_destroy(NULL);
  cr_assert_null(y);
  cr_assert_not_null(parity_status_string((parity_status_t)12345));
  parity_tensor_release(x);
}
