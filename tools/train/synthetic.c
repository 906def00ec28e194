/* synthetic.c — parity-train's generated-data models (see synthetic.h). */
#define _POSIX_C_SOURCE 200809L
#include "synthetic.h"

#include <stdio.h>

#include "common.h"

static parity_tensor_t *randn(parity_device_t *dev, parity_dtype_t dt, uint32_t rank, const int64_t *shape, double std,
                              uint64_t seed, uint64_t stream, int param) {
  parity_tensor_t *t;
  CHECK(train_randn(dev, dt, rank, shape, std, seed, stream, param, &t));
  return t;
}

/* Linear(8,32) -> tanh -> Linear(32,4), MSE against sin of a fixed teacher projection. */
void synthetic_train_mlp(parity_device_t *dev, parity_dtype_t dt, int steps, uint64_t seed, double lr) {
  parity_tensor_t *x = randn(dev, dt, 2, (int64_t[]){64, 8}, 1, seed, 1, 0);
  parity_tensor_t *teacher = randn(dev, dt, 2, (int64_t[]){4, 8}, 0.5, seed, 2, 0), *proj, *target;
  CHECK(parity_linear(x, teacher, NULL, &proj));
  CHECK(parity_unary(PARITY_OP_SIN, proj, &target));
  parity_tensor_t *p[4] = {
      randn(dev, dt, 2, (int64_t[]){32, 8}, 0.35, seed, 3, 1), randn(dev, dt, 1, (int64_t[]){32}, 0.1, seed, 4, 1),
      randn(dev, dt, 2, (int64_t[]){4, 32}, 0.18, seed, 5, 1), randn(dev, dt, 1, (int64_t[]){4}, 0.1, seed, 6, 1)};
  parity_optimizer_t *opt;
  CHECK(parity_adam_create(p, 4, lr, 0.9, 0.999, train_adam_eps(dt), &opt));
  for (int s = 0; s < steps; s++) {
    double t0 = train_now_ms();
    parity_tensor_t *t[4];
    parity_optimizer_zero_grad(opt);
    CHECK(parity_linear(x, p[0], p[1], &t[0]));
    CHECK(parity_unary(PARITY_OP_TANH, t[0], &t[1]));
    CHECK(parity_linear(t[1], p[2], p[3], &t[2]));
    CHECK(parity_mse_loss(t[2], target, &t[3]));
    CHECK(parity_backward(t[3], NULL, 0));
    CHECK(parity_optimizer_step(opt));
    double loss;
    CHECK(parity_tensor_to_f64(t[3], &loss, 1));
    printf("mlp step %3d loss %.9g time %.3f ms\n", s, loss, train_now_ms() - t0);
    if (train_diverged(loss, s)) exit(1);
    train_release_all(t, 4);
  }
  parity_optimizer_destroy(opt);
  train_release_all(p, 4);
  parity_tensor_t *rest[4] = {x, teacher, proj, target};
  train_release_all(rest, 4);
}

/* Conv(1->4, 3x3, pad 1) -> relu -> max_pool 2 -> Linear(64 -> 3), cross-entropy against the
 * softmax of a fixed teacher's logits. */
void synthetic_train_cnn(parity_device_t *dev, parity_dtype_t dt, int steps, uint64_t seed, double lr) {
  parity_tensor_t *x = randn(dev, dt, 4, (int64_t[]){16, 1, 8, 8}, 1, seed, 11, 0), *flat, *tl, *target;
  parity_tensor_t *teacher = randn(dev, dt, 2, (int64_t[]){3, 64}, 0.2, seed, 12, 0);
  CHECK(parity_reshape(x, 2, (int64_t[]){16, 64}, &flat));
  CHECK(parity_linear(flat, teacher, NULL, &tl));
  CHECK(parity_softmax(PARITY_OP_SOFTMAX, tl, 1, &target));
  parity_tensor_t *p[4] = {
      randn(dev, dt, 4, (int64_t[]){4, 1, 3, 3}, 0.3, seed, 13, 1), randn(dev, dt, 1, (int64_t[]){4}, 0.1, seed, 14, 1),
      randn(dev, dt, 2, (int64_t[]){3, 64}, 0.12, seed, 15, 1), randn(dev, dt, 1, (int64_t[]){3}, 0.1, seed, 16, 1)};
  parity_optimizer_t *opt;
  CHECK(parity_adam_create(p, 4, lr, 0.9, 0.999, train_adam_eps(dt), &opt));
  parity_conv2d_options_t conv = {.stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};
  parity_pool2d_options_t pool = {.kernel = {2, 2}, .stride = {2, 2}};
  for (int s = 0; s < steps; s++) {
    double t0 = train_now_ms();
    parity_tensor_t *t[6];
    parity_optimizer_zero_grad(opt);
    CHECK(parity_conv2d(x, p[0], p[1], &conv, &t[0]));
    CHECK(parity_unary(PARITY_OP_RELU, t[0], &t[1]));
    CHECK(parity_pool2d(PARITY_OP_MAX_POOL2D, t[1], &pool, &t[2]));
    CHECK(parity_reshape(t[2], 2, (int64_t[]){16, 64}, &t[3]));
    CHECK(parity_linear(t[3], p[2], p[3], &t[4]));
    CHECK(parity_cross_entropy(t[4], target, &t[5]));
    CHECK(parity_backward(t[5], NULL, 0));
    CHECK(parity_optimizer_step(opt));
    double loss;
    CHECK(parity_tensor_to_f64(t[5], &loss, 1));
    printf("cnn step %3d loss %.9g time %.3f ms\n", s, loss, train_now_ms() - t0);
    if (train_diverged(loss, s)) exit(1);
    train_release_all(t, 6);
  }
  parity_optimizer_destroy(opt);
  train_release_all(p, 4);
  parity_tensor_t *rest[5] = {x, flat, tl, target, teacher};
  train_release_all(rest, 5);
}
