/* gradcheck.c — see gradcheck.h. */
#include "gradcheck.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t numel(const pt_input *in) {
  int64_t k = 1;
  for (uint32_t i = 0; i < in->rank; i++) k *= in->shape[i];
  return k;
}

/* loss = sum(f(in) * w) with the given values; grads filled when grads != NULL. */
static double eval(parity_device_t *dev, const char *name, pt_fn f, void *ctx, const pt_input *inputs, uint32_t n,
                   double *const *values, double **grads) {
  parity_tensor_t *t[8] = {0}, *out = NULL, *w = NULL, *prod = NULL, *loss = NULL;
  for (uint32_t i = 0; i < n; i++) {
    cr_assert_eq(parity_tensor_from_f64(dev, PARITY_DTYPE_F64, inputs[i].rank, inputs[i].shape, values[i], &t[i]),
                 PARITY_STATUS_OK, "%s", parity_last_error());
    if (grads && inputs[i].differentiable) parity_tensor_set_requires_grad(t[i], 1);
  }
  cr_assert_eq(f(t, n, ctx, &out), PARITY_STATUS_OK, "%s: %s", name, parity_last_error());
  int64_t m = parity_tensor_numel(out);
  double *wv = malloc((size_t)(m ? m : 1) * sizeof *wv);
  for (int64_t i = 0; i < m; i++) wv[i] = 0.5 + 0.25 * sin(1.0 + 0.7 * (double)i); /* fixed, non-uniform */
  cr_assert_eq(parity_tensor_from_f64(dev, PARITY_DTYPE_F64, parity_tensor_rank(out), parity_tensor_shape(out), wv, &w),
               PARITY_STATUS_OK);
  parity_tensor_t *outf = NULL;
  cr_assert_eq(parity_cast(out, PARITY_DTYPE_F64, &outf), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_binary(PARITY_OP_MUL, outf, w, &prod), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_reduce(PARITY_OP_SUM, prod, 0, 0, &loss), PARITY_STATUS_OK, "%s", parity_last_error());
  double l;
  cr_assert_eq(parity_tensor_to_f64(loss, &l, 1), PARITY_STATUS_OK);
  if (grads) {
    cr_assert_eq(parity_backward(loss, NULL, 0), PARITY_STATUS_OK, "%s: %s", name, parity_last_error());
    for (uint32_t i = 0; i < n; i++) {
      if (!inputs[i].differentiable) continue;
      parity_tensor_t *g = parity_tensor_grad(t[i]);
      if (!g)
        memset(grads[i], 0, (size_t)numel(&inputs[i]) * sizeof(double));
      else
        cr_assert_eq(parity_tensor_to_f64(g, grads[i], (uint64_t)numel(&inputs[i])), PARITY_STATUS_OK);
    }
  }
  free(wv);
  parity_tensor_release(loss);
  parity_tensor_release(prod);
  parity_tensor_release(outf);
  parity_tensor_release(w);
  parity_tensor_release(out);
  for (uint32_t i = 0; i < n; i++) parity_tensor_release(t[i]);
  return l;
}

void pt_gradcheck(parity_device_t *dev, const char *name, pt_fn f, void *ctx, const pt_input *inputs, uint32_t n,
                  double tol) {
  double *values[8] = {0}, *grads[8] = {0};
  for (uint32_t i = 0; i < n; i++) {
    int64_t k = numel(&inputs[i]);
    values[i] = malloc((size_t)(k ? k : 1) * sizeof(double));
    grads[i] = malloc((size_t)(k ? k : 1) * sizeof(double));
    memcpy(values[i], inputs[i].values, (size_t)k * sizeof(double));
  }
  eval(dev, name, f, ctx, inputs, n, values, grads);
  int prev = parity_grad_mode_set(0);
  for (uint32_t i = 0; i < n; i++) {
    if (!inputs[i].differentiable) continue;
    for (int64_t j = 0; j < numel(&inputs[i]); j++) {
      double x0 = values[i][j], h = 1e-6 * fmax(1.0, fabs(x0));
      values[i][j] = x0 + h;
      double lp = eval(dev, name, f, ctx, inputs, n, values, NULL);
      values[i][j] = x0 - h;
      double lm = eval(dev, name, f, ctx, inputs, n, values, NULL);
      values[i][j] = x0;
      double num = (lp - lm) / (2 * h), ana = grads[i][j];
      cr_assert(fabs(num - ana) <= tol * (1 + fabs(num)),
                "%s: d/d input %u [%lld]: autodiff %.12g, finite differences %.12g", name, i, (long long)j, ana, num);
    }
  }
  parity_grad_mode_set(prev);
  for (uint32_t i = 0; i < n; i++) {
    free(values[i]);
    free(grads[i]);
  }
}
