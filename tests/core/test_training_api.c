/* The training API pieces a PyTorch user reaches for (issue 37, item 5): tensor_item, a status from
 * zero_grad, AdamW, gradient-norm clipping, step and cosine schedules and the Xavier/Kaiming
 * initialisers, each against a hand computation of PyTorch's documented formula (f64 on the CPU). */
#include <math.h>
#include <string.h>

#include "core_test.h"
#include <criterion/redirect.h>

static parity_device_t *cpu(void) { return pt_device("cpu"); }

/* a leaf p (requires grad) whose gradient is g: loss = sum(p * g), backward */
static parity_tensor_t *param_with_grad(parity_device_t *dev, int64_t n, const double *p, const double *g) {
  parity_tensor_t *w = vec(dev, PARITY_DTYPE_F64, n, p), *c = vec(dev, PARITY_DTYPE_F64, n, g), *y, *l;
  OK(parity_tensor_set_requires_grad(w, 1));
  OK(parity_binary(PARITY_OP_MUL, w, c, &y));
  OK(parity_reduce(PARITY_OP_SUM, y, 0, 0, &l));
  OK(parity_backward(l, NULL, 0));
  parity_tensor_release(l);
  parity_tensor_release(y);
  parity_tensor_release(c);
  return w;
}

Test(training_api, item_reads_one_element_and_refuses_more) {
  parity_device_t *dev = cpu();
  int64_t one[2] = {1, 1};
  parity_tensor_t *a, *b = vec(dev, PARITY_DTYPE_F32, 2, (double[]){1, 2});
  OK(parity_tensor_full(dev, PARITY_DTYPE_BF16, 2, one, 3.5, &a));
  double v = 0;
  OK(parity_tensor_item(a, &v));
  cr_assert_eq(v, 3.5);
  cr_assert_eq(parity_tensor_item(b, &v), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "2 elements, not one"), "%s", parity_last_error());
  parity_tensor_release(a);
  parity_tensor_release(b);
}

Test(training_api, zero_grad_returns_a_status) {
  cr_assert_eq(parity_optimizer_zero_grad(NULL), PARITY_STATUS_INVALID_ARGUMENT);
  parity_device_t *dev = cpu();
  parity_tensor_t *w = param_with_grad(dev, 2, (double[]){1, 2}, (double[]){3, 4});
  parity_optimizer_t *o;
  OK(parity_sgd_create(&w, 1, 0.1, 0, &o));
  OK(parity_optimizer_zero_grad(o));
  cr_assert_null(parity_tensor_grad(w));
  parity_optimizer_destroy(o);
  parity_tensor_release(w);
}

/* torch.optim.AdamW, first step: p *= 1 - lr*wd; m = (1-b1) g; v = (1-b2) g^2;
 * p -= lr * (m / (1-b1)) / (sqrt(v / (1-b2)) + eps) */
Test(training_api, adamw_decays_the_weights_apart_from_the_gradient) {
  parity_device_t *dev = cpu();
  const double p0[3] = {1.0, -2.0, 0.5}, g[3] = {0.5, 0.25, -3.0};
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  parity_tensor_t *w = param_with_grad(dev, 3, p0, g);
  parity_optimizer_t *o;
  OK(parity_adamw_create(&w, 1, lr, b1, b2, eps, wd, &o));
  OK(parity_optimizer_step(o));
  double got[3];
  OK(parity_tensor_to_f64(w, got, 3));
  for (int i = 0; i < 3; i++) {
    double p = p0[i] * (1 - lr * wd), m = (1 - b1) * g[i], v = (1 - b2) * g[i] * g[i];
    p -= lr * (m / (1 - b1)) / (sqrt(v / (1 - b2)) + eps);
    cr_assert(fabs(got[i] - p) <= 1e-12 * fabs(p), "element %d: %.17g, expected %.17g", i, got[i], p);
  }
  parity_optimizer_destroy(o);
  cr_assert_eq(parity_adamw_create(&w, 1, lr, b1, b2, eps, -1, &o), PARITY_STATUS_INVALID_ARGUMENT);
  parity_tensor_release(w);
}

/* torch.nn.utils.clip_grad_norm_: coefficient max_norm / (norm + 1e-6), applied below 1 */
Test(training_api, clip_grad_norm_scales_every_gradient_by_one_coefficient) {
  parity_device_t *dev = cpu();
  parity_tensor_t *ws[2] = {param_with_grad(dev, 2, (double[]){0, 0}, (double[]){3, 0}),
                            param_with_grad(dev, 1, (double[]){0}, (double[]){4})};
  double norm = 0, a[2], b[1];
  OK(parity_clip_grad_norm(ws, 2, 1.0, &norm));
  cr_assert_eq(norm, 5.0);
  OK(parity_tensor_to_f64(parity_tensor_grad(ws[0]), a, 2));
  OK(parity_tensor_to_f64(parity_tensor_grad(ws[1]), b, 1));
  double c = 1.0 / (5.0 + 1e-6);
  cr_assert(fabs(a[0] - 3 * c) < 1e-15 && a[1] == 0 && fabs(b[0] - 4 * c) < 1e-15, "%g %g %g", a[0], a[1], b[0]);
  OK(parity_clip_grad_norm(ws, 2, 10.0, &norm)); /* already inside: unchanged */
  OK(parity_tensor_to_f64(parity_tensor_grad(ws[1]), b, 1));
  cr_assert(fabs(b[0] - 4 * c) < 1e-15);
  cr_assert_eq(parity_clip_grad_norm(ws, 2, 0, &norm), PARITY_STATUS_INVALID_ARGUMENT);
  parity_tensor_release(ws[0]);
  parity_tensor_release(ws[1]);
}

/* An f16 gradient's norm is summed in f32: in f16 a square past 65504 (300^2) or a sum of squares
 * past it (100 of 26^2) is inf, so the norm was refused as not finite exactly where clipping
 * matters, and a square under 2^-25 (1e-4^2) was 0. bf16 the same way (its 8-bit significand). */
static parity_tensor_t *half_param(parity_device_t *dev, parity_dtype_t dt, int64_t n, const double *g) {
  parity_tensor_t *h, *c64, *c, *l, *s;
  OK(parity_tensor_zeros(dev, dt, 1, &n, &h));
  OK(parity_tensor_set_requires_grad(h, 1));
  OK(parity_tensor_from_host(dev, PARITY_DTYPE_F64, 1, &n, g, &c64));
  OK(parity_cast(c64, dt, &c));
  OK(parity_binary(PARITY_OP_MUL, h, c, &l));
  OK(parity_reduce(PARITY_OP_SUM, l, 0, 0, &s));
  OK(parity_backward(s, NULL, 0));
  parity_tensor_t *all[] = {c64, c, l, s};
  for (int i = 0; i < 4; i++) parity_tensor_release(all[i]);
  return h;
}

Test(training_api, clip_grad_norm_of_f16_gradients_is_summed_in_f32) {
  parity_device_t *dev = cpu();
  double big[100], small[4] = {1e-4, 1e-4, 1e-4, 1e-4}, norm = 0, got[100];
  for (int i = 0; i < 100; i++) big[i] = i ? 26 : 300; /* sum of squares 90000 + 99 * 676 */
  parity_tensor_t *p[2] = {half_param(dev, PARITY_DTYPE_F16, 100, big), half_param(dev, PARITY_DTYPE_F16, 4, small)};
  OK(parity_clip_grad_norm(p, 2, 1.0, &norm));
  double want = sqrt(90000 + 99 * 676.0 + 4 * 1.0001659e-4 * 1.0001659e-4);
  cr_assert(fabs(norm - want) < 1e-9 * want, "norm %.17g, want %.17g", norm, want);
  OK(parity_tensor_to_f64(parity_tensor_grad(p[0]), got, 100));
  cr_assert(fabs(got[0] - 300 / want) < 1e-3 * (300 / want) && fabs(got[1] - 26 / want) < 1e-3 * (26 / want),
            "clipped to %g and %g", got[0], got[1]);
  parity_tensor_release(p[1]);
  p[1] = half_param(dev, PARITY_DTYPE_F16, 4, small);
  OK(parity_clip_grad_norm(p + 1, 1, 1.0, &norm)); /* alone: 2e-4, not 0 */
  cr_assert(fabs(norm - 2 * 1.0001659e-4) < 1e-9, "norm %.17g", norm);
  parity_tensor_t *b = half_param(dev, PARITY_DTYPE_BF16, 100, big);
  OK(parity_clip_grad_norm(&b, 1, 1.0, &norm));
  cr_assert(fabs(norm - sqrt(90000 + 99 * 676.0)) < 1e-9 * norm, "bf16 norm %.17g", norm);
  parity_tensor_release(b);
  parity_tensor_release(p[0]);
  parity_tensor_release(p[1]);
}

Test(training_api, step_and_cosine_schedules_follow_pytorch) {
  cr_assert_eq(parity_lr_step(0.1, 0.5, 10, 9), 0.1);
  cr_assert(fabs(parity_lr_step(0.1, 0.5, 10, 25) - 0.025) < 1e-17);
  cr_assert_eq(parity_lr_cosine(1.0, 0.0, 0, 100), 1.0);
  cr_assert(fabs(parity_lr_cosine(1.0, 0.0, 50, 100) - 0.5) < 1e-15);
  cr_assert(fabs(parity_lr_cosine(1.0, 0.1, 100, 100) - 0.1) < 1e-15);
  cr_assert(fabs(parity_lr_cosine(1.0, 0.1, 150, 100) - 0.1) < 1e-15); /* held at the end */
  double quarter = 0.1 + 0.9 * (1 + cos(3.14159265358979323846 / 4)) / 2;
  cr_assert(fabs(parity_lr_cosine(1.0, 0.1, 25, 100) - quarter) < 1e-15);
}

static void moments(parity_tensor_t *t, int64_t n, double *mean, double *sd, double *maxabs) {
  double *v = malloc(sizeof(double) * (size_t)n), s = 0, s2 = 0;
  OK(parity_tensor_to_f64(t, v, (uint64_t)n));
  *maxabs = 0;
  for (int64_t i = 0; i < n; i++) {
    s += v[i];
    s2 += v[i] * v[i];
    if (fabs(v[i]) > *maxabs) *maxabs = fabs(v[i]);
  }
  *mean = s / (double)n;
  *sd = sqrt(s2 / (double)n - *mean * *mean);
  free(v);
}

/* torch.nn.init: fan_in = shape[1] * receptive, fan_out = shape[0] * receptive */
Test(training_api, xavier_and_kaiming_draw_with_the_documented_spread) {
  parity_device_t *dev = cpu();
  parity_generator_t gen = {7, 0};
  int64_t lin[2] = {200, 300}, conv[4] = {64, 3, 3, 3};
  parity_tensor_t *a, *b, *c;
  double mean, sd, maxabs;
  OK(parity_init_weight(dev, PARITY_DTYPE_F64, 2, lin, PARITY_INIT_XAVIER_UNIFORM, 1.0, &gen, &a));
  cr_assert_eq(gen.offset, 60000, "the generator advances past what it drew");
  double bound = sqrt(6.0 / 500.0);
  moments(a, 60000, &mean, &sd, &maxabs);
  cr_assert(maxabs <= bound, "%g > %g", maxabs, bound);
  cr_assert(fabs(sd - bound / sqrt(3.0)) < 0.02 * bound / sqrt(3.0), "sd %g", sd);
  OK(parity_init_weight(dev, PARITY_DTYPE_F64, 4, conv, PARITY_INIT_KAIMING_NORMAL, sqrt(2.0), &gen, &b));
  moments(b, 64 * 27, &mean, &sd, &maxabs);
  double want = sqrt(2.0) / sqrt(27.0); /* fan_in = 3 * 3 * 3 */
  cr_assert(fabs(sd - want) < 0.06 * want && fabs(mean) < 0.1 * want, "sd %g mean %g, want sd %g", sd, mean, want);
  /* the same generator position draws the same tensor; the next position another */
  parity_generator_t again = {7, 0};
  OK(parity_init_weight(dev, PARITY_DTYPE_F64, 2, lin, PARITY_INIT_XAVIER_UNIFORM, 1.0, &again, &c));
  double *x = malloc(60000 * sizeof *x), *y = malloc(60000 * sizeof *y);
  OK(parity_tensor_to_f64(a, x, 60000));
  OK(parity_tensor_to_f64(c, y, 60000));
  cr_assert(memcmp(x, y, 60000 * sizeof *x) == 0);
  free(x);
  free(y);
  int64_t bad[1] = {5};
  parity_tensor_t *d = NULL;
  cr_assert_eq(parity_init_weight(dev, PARITY_DTYPE_F64, 1, bad, PARITY_INIT_XAVIER_UNIFORM, 1.0, &gen, &d),
               PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_eq(parity_init_weight(dev, PARITY_DTYPE_F64, 2, lin, PARITY_INIT_XAVIER_NORMAL, -1, &gen, &d),
               PARITY_STATUS_INVALID_ARGUMENT);
  parity_tensor_release(a);
  parity_tensor_release(b);
  parity_tensor_release(c);
}

/* Adam's eps rounds to 0 in f16 when it is 1e-8 (PyTorch's default and parity's usual one): where
 * a gradient's square underflows, v stays 0 and the update divides by zero. adam_create warns,
 * once per dtype, on a context whose log level shows warnings, and only where eps is lost: f32
 * parameters and an f16 eps of 1e-4 stay quiet. The step shows what it warns of. */
static void redirect(void) { cr_redirect_stderr(); }
static size_t read_stderr(char *buf, size_t n) {
  fflush(stderr);
  size_t k = fread(buf, 1, n - 1, cr_get_redirected_stderr());
  buf[k] = 0;
  return k;
}

static double adam_f16_step(parity_device_t *dev, double eps) {
  parity_tensor_t *h, *c, *l; /* an f16 leaf h = 1 whose gradient is 1e-3: 0.001 g^2 is 0 in f16 */
  OK(parity_tensor_full(dev, PARITY_DTYPE_F16, 1, (int64_t[]){1}, 1.0, &h));
  OK(parity_tensor_full(dev, PARITY_DTYPE_F16, 1, (int64_t[]){1}, 1e-3, &c));
  OK(parity_tensor_set_requires_grad(h, 1));
  OK(parity_binary(PARITY_OP_MUL, h, c, &l));
  parity_tensor_t *s;
  OK(parity_reduce(PARITY_OP_SUM, l, 0, 0, &s));
  OK(parity_backward(s, NULL, 0));
  parity_optimizer_t *o;
  OK(parity_adam_create(&h, 1, 0.01, 0.9, 0.999, eps, &o));
  OK(parity_optimizer_step(o));
  double v = 0;
  OK(parity_tensor_item(h, &v));
  parity_optimizer_destroy(o);
  parity_tensor_t *all[] = {h, l, c, s};
  for (int i = 0; i < 4; i++) parity_tensor_release(all[i]);
  return v;
}

Test(training_api, adam_warns_where_eps_is_zero_in_a_parameters_dtype, .init = redirect) {
  parity_context_options_t opt;
  parity_context_options_init(&opt);
  opt.backend = "cpu";
  opt.log_level = 1;
  parity_context_t *ctx;
  parity_device_t *dev;
  OK(parity_context_create(&opt, &ctx));
  OK(parity_context_default_device(ctx, &dev));
  char text[2048];
  parity_tensor_t *p[3];
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F32, 1, (int64_t[]){2}, &p[0]));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F16, 1, (int64_t[]){2}, &p[1]));
  OK(parity_tensor_zeros(dev, PARITY_DTYPE_F16, 1, (int64_t[]){3}, &p[2]));
  for (int i = 0; i < 3; i++) OK(parity_tensor_set_requires_grad(p[i], 1));
  parity_optimizer_t *o;
  OK(parity_adam_create(p, 1, 1e-3, 0.9, 0.999, 1e-8, &o)); /* f32 only: 1e-8 is a float */
  parity_optimizer_destroy(o);
  OK(parity_adam_create(p + 1, 2, 1e-3, 0.9, 0.999, 1e-4, &o)); /* f16 holds 1e-4 */
  parity_optimizer_destroy(o);
  cr_assert_eq(read_stderr(text, sizeof text), 0, "a warning where eps is held: %s", text);
  OK(parity_adamw_create(p, 3, 1e-3, 0.9, 0.999, 1e-8, 0.01, &o));
  parity_optimizer_destroy(o);
  read_stderr(text, sizeof text);
  cr_assert(strstr(text, "eps 1e-08 is 0 in f16 (parameter 1)"), "%s", text);
  cr_assert_null(strstr(strstr(text, "adam_create") + 1, "adam_create"), "warned twice for one dtype: %s", text);
  for (int i = 0; i < 3; i++) parity_tensor_release(p[i]);
  /* what it warns of: with eps 1e-8 the step divides m = 1e-3 by 0; with 1e-4 by 1e-4 (v is 0 in
   * f16 either way), so p = 1 - 0.01 * 10 */
  cr_assert(isinf(adam_f16_step(dev, 1e-8)));
  double v = adam_f16_step(dev, 1e-4);
  cr_assert(fabs(v - 0.9) < 2e-3, "p = %g", v);
  parity_context_destroy(ctx);
}
