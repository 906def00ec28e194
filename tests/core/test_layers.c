/* Layers and optimizers whose behaviour is not a plain gradient: dropout, SGD with momentum,
 * Adam's first step, batch-norm running statistics. */
#include "core_test.h"

Test(layers, dropout_is_counter_based_scaled_and_identity_in_eval) {
  parity_device_t *dev = pt_device("cpu");
  parity_tensor_t *x, *a, *b, *c, *e, *s, *loss;
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F64, 1, (int64_t[]){1000}, &x));
  OK(parity_tensor_set_requires_grad(x, 1));
  OK(parity_dropout(x, 0.25, 1, 9, 0, &a));
  OK(parity_dropout(x, 0.25, 1, 9, 0, &b));
  OK(parity_dropout(x, 0.25, 1, 10, 0, &c));
  static double av[1000], bv[1000], cv[1000], g[1000];
  OK(parity_tensor_to_f64(a, av, 1000));
  OK(parity_tensor_to_f64(b, bv, 1000));
  OK(parity_tensor_to_f64(c, cv, 1000));
  int kept = 0, differ = 0;
  for (int i = 0; i < 1000; i++) {
    cr_assert(av[i] == 0 || av[i] == 1 / 0.75, "kept values are scaled by 1/(1-p): %g", av[i]);
    cr_assert_eq(av[i], bv[i], "same seed and offset, same mask");
    kept += av[i] != 0;
    differ += av[i] != cv[i];
  }
  cr_assert(kept > 700 && kept < 800, "kept %d of 1000 at p = 0.25", kept);
  cr_assert_gt(differ, 100, "another seed, another mask");
  OK(parity_reduce(PARITY_OP_SUM, a, 0, 0, &s));
  OK(parity_backward(s, NULL, 0));
  OK(parity_tensor_to_f64(parity_tensor_grad(x), g, 1000));
  for (int i = 0; i < 1000; i++) cr_assert_eq(g[i], av[i], "the gradient is the mask times the scale");
  OK(parity_dropout(x, 0.25, 0, 9, 0, &e));
  cr_assert(parity_tensor_shares_storage(e, x), "evaluation mode returns a view of the input");
  double ones[1000];
  for (int i = 0; i < 1000; i++) ones[i] = 1;
  expect_values(e, ones, 1000);
  cr_assert_neq(parity_dropout(x, 1.0, 1, 9, 0, &loss), PARITY_STATUS_OK);
  parity_tensor_t *all[] = {x, a, b, c, e, s};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

/* p = [1, 2], loss = sum(p * k) with k = [3, -1], so grad = k every step. */
static void optimizer_steps(parity_optimizer_t *opt, parity_tensor_t *p, parity_tensor_t *k, int steps) {
  for (int s = 0; s < steps; s++) {
    parity_tensor_t *m, *l;
    parity_optimizer_zero_grad(opt);
    OK(parity_binary(PARITY_OP_MUL, p, k, &m));
    OK(parity_reduce(PARITY_OP_SUM, m, 0, 0, &l));
    OK(parity_backward(l, NULL, 0));
    OK(parity_optimizer_step(opt));
    parity_tensor_release(m);
    parity_tensor_release(l);
  }
}

Test(optim, sgd_with_momentum_follows_the_update_rule) {
  parity_device_t *dev = pt_device("cpu");
  double pv[2] = {1, 2}, kv[2] = {3, -1};
  parity_tensor_t *p = vec(dev, PARITY_DTYPE_F64, 2, pv), *k = vec(dev, PARITY_DTYPE_F64, 2, kv);
  OK(parity_tensor_set_requires_grad(p, 1));
  parity_optimizer_t *opt;
  OK(parity_sgd_create(&p, 1, 0.1, 0.9, &opt));
  optimizer_steps(opt, p, k, 3);
  /* v1 = g, v2 = 1.9 g, v3 = 2.71 g; p3 = p0 - 0.1 * (1 + 1.9 + 2.71) g = p0 - 0.561 g */
  double want[2] = {1 - 0.561 * 3, 2 + 0.561};
  expect_close(p, want, 2, 1e-14);
  parity_optimizer_destroy(opt);
  parity_tensor_release(p);
  parity_tensor_release(k);
}

Test(optim, adam_first_step_moves_each_parameter_by_lr) {
  parity_device_t *dev = pt_device("cpu");
  double pv[2] = {1, 2}, kv[2] = {3, -1};
  parity_tensor_t *p = vec(dev, PARITY_DTYPE_F64, 2, pv), *k = vec(dev, PARITY_DTYPE_F64, 2, kv);
  OK(parity_tensor_set_requires_grad(p, 1));
  parity_optimizer_t *opt;
  OK(parity_adam_create(&p, 1, 0.01, 0.9, 0.999, 1e-12, &opt));
  optimizer_steps(opt, p, k, 1);
  double want[2] = {1 - 0.01, 2 + 0.01}; /* bias-corrected m / sqrt(v) = sign(g) */
  expect_close(p, want, 2, 1e-10);
  parity_optimizer_destroy(opt);
  cr_assert_neq(parity_sgd_create(&k, 1, 0.1, 0, &opt), PARITY_STATUS_OK, "parameters must require grad");
  parity_tensor_release(p);
  parity_tensor_release(k);
}

Test(layers, batch_norm_updates_running_statistics_and_uses_them_in_eval) {
  parity_device_t *dev = pt_device("cpu");
  double xv[8] = {1, 3, 10, 30, 5, 7, 50, 70}; /* [N=2, C=2, 2]: channel 0 {1,3,5,7}, channel 1 {10,30,50,70} */
  parity_tensor_t *x = mat(dev, PARITY_DTYPE_F64, 3, (int64_t[]){2, 2, 2}, xv), *rm, *rv, *y, *ye;
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F64, 1, (int64_t[]){2}, &rm));
  OK(parity_tensor_ones(dev, PARITY_DTYPE_F64, 1, (int64_t[]){2}, &rv));
  OK(parity_batch_norm(x, NULL, NULL, rm, rv, 1, 0.5, 0, &y));
  double want_rm[2] = {0.5 * 4, 0.5 * 40}, want_rv[2] = {0.5 + 0.5 * 20.0 / 3, 0.5 + 0.5 * 2000.0 / 3};
  expect_close(rm, want_rm, 2, 1e-14);
  expect_close(rv, want_rv, 2, 1e-14);
  double yv[8];
  OK(parity_tensor_to_f64(y, yv, 8));
  cr_assert(fabs(yv[0] + 3 / sqrt(5.0)) < 1e-12, "training normalises with the batch's biased variance: %g", yv[0]);
  OK(parity_batch_norm(x, NULL, NULL, rm, rv, 0, 0.5, 0, &ye));
  double ev[8];
  OK(parity_tensor_to_f64(ye, ev, 8));
  cr_assert(fabs(ev[0] - (1 - 2) / sqrt(want_rv[0])) < 1e-12, "evaluation uses the running statistics: %g", ev[0]);
  parity_tensor_t *all[] = {x, rm, rv, y, ye};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

/* f16 and bf16 inputs are normalised in f32: in f16 the squared deviation of 600 among seven 0s
 * (525^2 = 275,625) is inf, and layer and batch norm gave 0 for the whole row. The output, its
 * gradient and the running statistics keep the input's dtype (the variance, 39,375, fits f16). */
Test(layers, norms_of_f16_and_bf16_inputs_are_computed_in_f32) {
  parity_device_t *dev = pt_device("cpu");
  double xv[8] = {0, 0, 0, 0, 0, 0, 0, 600}, want[8], var = (7 * 75.0 * 75 + 525.0 * 525) / 8;
  for (int i = 0; i < 8; i++) want[i] = (xv[i] - 75) / sqrt(var + 1e-5);
  parity_dtype_t dts[2] = {PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 2; d++) {
    parity_tensor_t *x64 = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){1, 8}, xv), *x, *y, *s, *xt, *yb, *rm, *rv;
    OK(parity_cast(x64, dts[d], &x));
    OK(parity_tensor_set_requires_grad(x, 1));
    OK(parity_layer_norm(x, 1, NULL, NULL, 1e-5, &y));
    cr_assert_eq(parity_tensor_dtype(y), dts[d]);
    double got[8], g[8];
    OK(parity_tensor_to_f64(y, got, 8));
    for (int i = 0; i < 8; i++)
      cr_assert(fabs(got[i] - want[i]) < 1e-2 * fabs(want[i]), "%s layer_norm[%d] = %g, want %g", d ? "bf16" : "f16", i,
                got[i], want[i]);
    OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &s));
    OK(parity_backward(s, NULL, 0)); /* the sum of a normalised row does not depend on x */
    cr_assert_eq(parity_tensor_dtype(parity_tensor_grad(x)), dts[d]);
    OK(parity_tensor_to_f64(parity_tensor_grad(x), g, 8));
    for (int i = 0; i < 8; i++) cr_assert(fabs(g[i]) < 1e-3, "grad[%d] = %g", i, g[i]);
    /* batch norm over N = 8 of one channel, running statistics in the input's dtype */
    OK(parity_transpose(x, 0, 1, &xt));
    OK(parity_tensor_zeros(dev, dts[d], 1, (int64_t[]){1}, &rm));
    OK(parity_tensor_zeros(dev, dts[d], 1, (int64_t[]){1}, &rv));
    OK(parity_batch_norm(xt, NULL, NULL, rm, rv, 1, 1.0, 1e-5, &yb));
    OK(parity_tensor_to_f64(yb, got, 8));
    for (int i = 0; i < 8; i++)
      cr_assert(fabs(got[i] - want[i]) < 1e-2 * fabs(want[i]), "batch_norm[%d] = %g", i, got[i]);
    double m = 0, v = 0;
    OK(parity_tensor_item(rm, &m));
    OK(parity_tensor_item(rv, &v));
    cr_assert(m == 75 && fabs(v - var * 8 / 7) < 1e-2 * var, "running mean %g, var %g (unbiased: %g)", m, v,
              var * 8 / 7);
    parity_tensor_t *all[] = {x64, x, y, s, xt, yb, rm, rv};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
  }
}

/* Attention scales q before q k^T (as PyTorch does): in f16 with E = 16, one head, q at 80 and the
 * keys at 80 and 79.9375, q k^T is 102,400 and 102,320, past f16's 65,504, while the scores, a
 * quarter of them, fit and differ by 20: the first key takes all the weight, so the output is the
 * first value, 1. Before, both scores were inf and weighed alike: the output was 0. */
Test(layers, f16_attention_scales_before_the_product) {
  parity_device_t *dev = pt_device("cpu");
  double eye[256] = {0}, qv[32], kv[32], vv[32];
  for (int i = 0; i < 16; i++) eye[i * 17] = 1;
  for (int i = 0; i < 32; i++) qv[i] = 80, kv[i] = i < 16 ? 80 : 79.9375, vv[i] = i < 16 ? 1 : -1;
  parity_tensor_t *t64[4] = {mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){16, 16}, eye),
                             mat(dev, PARITY_DTYPE_F64, 3, (int64_t[]){1, 2, 16}, qv),
                             mat(dev, PARITY_DTYPE_F64, 3, (int64_t[]){1, 2, 16}, kv),
                             mat(dev, PARITY_DTYPE_F64, 3, (int64_t[]){1, 2, 16}, vv)},
                  *t[4], *y;
  for (int i = 0; i < 4; i++) OK(parity_cast(t64[i], PARITY_DTYPE_F16, &t[i]));
  parity_mha_weights_t w = {.w_q = t[0], .w_k = t[0], .w_v = t[0], .w_o = t[0], .num_heads = 1};
  OK(parity_multi_head_attention(t[1], t[2], t[3], &w, NULL, &y));
  double got[32];
  OK(parity_tensor_to_f64(y, got, 32));
  for (int i = 0; i < 32; i++) cr_assert(got[i] == 1, "output[%d] = %g (the first value, 1)", i, got[i]);
  for (int i = 0; i < 4; i++) parity_tensor_release(t64[i]), parity_tensor_release(t[i]);
  parity_tensor_release(y);
}
