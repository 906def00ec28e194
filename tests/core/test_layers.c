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
