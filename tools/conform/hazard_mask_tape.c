/* hazard_mask_tape.c — the two masked-gradient cases of the autodiff issue, through the tape,
 * in every floating dtype the device runs:
 *   y = [0,1,2], mask = (y == 1), loss = sum(where(mask, x, 0)), x = [1,2,3]: grad exactly [0,1,0];
 *   loss = sum(x^3) / count(x > 3), x = 1..9: the count is exactly 6 and grad = x^2 / 2.
 * The masks must be identical with and without a gradient being taken. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hazard_tape.h"
#include "parity_support/tolerance.h"

/* Returns 0 when the device cannot run the dtype (nothing recorded), 1 when checked. */
static int where_case(cf_env_t *env, cf_result_t *r, int32_t dt) {
  static const double yv[3] = {0, 1, 2}, xv[3] = {1, 2, 3};
  const int64_t n3 = 3;
  parity_status_t st = PARITY_STATUS_OK;
  parity_tensor_t *y = ht_tensor(env->dev, dt, 1, &n3, yv, 0, &st), *x = NULL, *one = NULL, *zero = NULL;
  parity_tensor_t *m_plain = NULL, *m_grad = NULL, *w = NULL, *loss = NULL;
  if (st == PARITY_STATUS_OK) x = ht_tensor(env->dev, dt, 1, &n3, xv, 0, &st);
  if (st == PARITY_STATUS_OK) st = parity_scalar_like(y, 1.0, &one);
  if (st == PARITY_STATUS_OK) st = parity_scalar_like(y, 0.0, &zero);
  if (st == PARITY_STATUS_OK) st = parity_compare(PARITY_OP_EQ, y, one, &m_plain);
  if (st == PARITY_STATUS_OK) st = parity_tensor_set_requires_grad(x, 1);
  if (st == PARITY_STATUS_OK) st = parity_compare(PARITY_OP_EQ, y, one, &m_grad);
  if (st == PARITY_STATUS_OK) st = parity_where(m_grad, x, zero, &w);
  if (st == PARITY_STATUS_OK) st = parity_reduce(PARITY_OP_SUM, w, 0, 0, &loss);
  if (st == PARITY_STATUS_OK) st = parity_backward(loss, NULL, 0);
  int ran = st == PARITY_STATUS_OK;
  if (ran) {
    double mp[3], mg[3], g[3];
    parity_tensor_to_f64(m_plain, mp, 3);
    parity_tensor_to_f64(m_grad, mg, 3);
    parity_tensor_to_f64(parity_tensor_grad(x), g, 3);
    for (int i = 0; i < 3; i++) {
      double want = i == 1;
      if (mp[i] != want || mg[i] != want)
        cf_result_fail(r, "%s: mask (y == 1) element %d is %g without and %g with a gradient, must be %g",
                       psup_dtype_name(dt), i, mp[i], mg[i], want);
      if (g[i] != want)
        cf_result_fail(r, "%s: gradient of sum(where(mask, x, 0)) element %d is %g, must be %g", psup_dtype_name(dt), i,
                       g[i], want);
    }
  } else if (st != PARITY_STATUS_UNSUPPORTED) {
    cf_result_fail(r, "%s: where case failed: %s", psup_dtype_name(dt), parity_last_error());
    ran = 1;
  }
  parity_tensor_t *all[] = {y, x, one, zero, m_plain, m_grad, w, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
  return ran;
}

static int count_case(cf_env_t *env, cf_result_t *r, int32_t dt) {
  parity_status_t st;
  parity_tensor_t *x = NULL, *three = NULL, *cube = NULL, *s = NULL, *gt = NULL, *cnt = NULL, *cf = NULL, *loss = NULL;
  st = parity_tensor_arange(env->dev, (parity_dtype_t)dt, 1, 10, 1, &x);
  if (st == PARITY_STATUS_OK) st = parity_tensor_set_requires_grad(x, 1);
  if (st == PARITY_STATUS_OK) st = parity_scalar_like(x, 3.0, &three);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_POW, x, three, &cube);
  if (st == PARITY_STATUS_OK) st = parity_reduce(PARITY_OP_SUM, cube, 0, 0, &s);
  if (st == PARITY_STATUS_OK) st = parity_compare(PARITY_OP_GT, x, three, &gt);
  if (st == PARITY_STATUS_OK) st = parity_reduce(PARITY_OP_SUM, gt, 0, 0, &cnt);
  if (st == PARITY_STATUS_OK) st = parity_cast(cnt, (parity_dtype_t)dt, &cf);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_DIV, s, cf, &loss);
  if (st == PARITY_STATUS_OK) st = parity_backward(loss, NULL, 0);
  int ran = st == PARITY_STATUS_OK;
  if (ran) {
    double c, g[9];
    parity_tensor_to_f64(cnt, &c, 1);
    parity_tensor_to_f64(parity_tensor_grad(x), g, 9);
    if (c != 6) cf_result_fail(r, "%s: count(x > 3) for x = 1..9 is %g, must be 6", psup_dtype_name(dt), c);
    double worst = 0;
    for (int i = 0; i < 9; i++) {
      double want = (i + 1.0) * (i + 1.0) / 2.0, ulp = psup_ulp_distance(g[i], want, dt);
      worst = fmax(worst, ulp);
    }
    /* pow, a sum, a division and their gradients: a few ulps; dividing by anything but 6 is off by >= 14% */
    if (worst > 64)
      cf_result_fail(r, "%s: gradient of sum(x^3)/count(x > 3) is %.3g ulps from x^2/2", psup_dtype_name(dt), worst);
    r->max_ulp = isnan(r->max_ulp) ? worst : fmax(r->max_ulp, worst);
  } else if (st != PARITY_STATUS_UNSUPPORTED) {
    cf_result_fail(r, "%s: count case failed: %s", psup_dtype_name(dt), parity_last_error());
    ran = 1;
  }
  parity_tensor_t *all[] = {x, three, cube, s, gt, cnt, cf, loss};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
  return ran;
}

void cf_hazard_mask_under_gradient_tape(cf_env_t *env, cf_result_t *r) {
  int checked = 0;
  for (int32_t dt = PARITY_DTYPE_F32; dt <= PARITY_DTYPE_BF16; dt++) {
    if (dt == PARITY_DTYPE_F64 && !(env->info.flags & PARITY_DEVICE_FLAG_FLOAT64)) continue;
    checked += where_case(env, r, dt);
    checked += count_case(env, r, dt);
  }
  if (!checked && r->status != CF_FAIL) {
    r->status = CF_UNSUPPORTED;
    cf_result_note(r, "no floating dtype runs both cases");
  } else if (r->status == CF_PASS) {
    cf_result_note(r, "masks identical with and without a gradient; grad [0,1,0]; count 6 (%d case runs)", checked);
  }
}
