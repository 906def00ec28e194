/* fd.c — the float64 backward of a device checked against central finite differences of its own
 * float64 forward. With L(x) = sum(dy * f(x)) and a random direction v over every differentiable
 * input, backward must give <grad, v> = (L(x + h v) - L(x - h v)) / 2h up to O(h^2) truncation
 * and the rounding of L. This is how the oracle itself (the CPU plugin) is held to the maths. */
#include <math.h>
#include <string.h>

#include "conform.h"

#define FD_STEP 1e-6
#define FD_REL 1e-6   /* truncation allowance, relative to sum |grad * v| */
#define FD_ROUND 1e-9 /* rounding of L, relative to sum |dy * y| (2^-53 / h, with room) */

static double loss(const cf_host_t *y, const cf_host_t *dy, double *abs_sum) {
  double l = 0, a = 0;
  for (int64_t i = 0; i < y->count; i++) {
    double t = cf_host_get(dy, i) * cf_host_get(y, i);
    l += t;
    a += fabs(t);
  }
  if (abs_sum) *abs_sum = a;
  return l;
}

void cf_run_fd(cf_env_t *env, const cf_case_t *c, cf_result_t *r) {
  cf_host_t x[PARITY_MAX_INPUTS] = {0}, xs[PARITY_MAX_INPUTS] = {0}, v[PARITY_MAX_INPUTS] = {0};
  cf_host_t dy = {0}, y[PARITY_MAX_OUTPUTS] = {0}, g[PARITY_MAX_OUTPUTS] = {0}, yp[PARITY_MAX_OUTPUTS] = {0};
  cf_spec_t grads[PARITY_MAX_OUTPUTS];
  cf_op_t fwd = {
      .op = c->op, .direction = PARITY_DIRECTION_FORWARD, .params = c->params, .nin = c->nin, .nout = c->nout};
  cf_op_t bop;
  char msg[512];
  for (uint32_t i = 0; i < c->nin; i++) {
    if (!c->has_in[i]) continue;
    if (cf_host_alloc(&x[i], &c->in[i]) != 0 || cf_host_alloc(&xs[i], &c->in[i]) != 0 ||
        cf_host_alloc(&v[i], &c->in[i]) != 0)
      goto oom;
    cf_values_fill(&env->values, c, (int)i, c->values, 0, &x[i]);
    for (int64_t j = 0; j < v[i].count; j++)
      cf_host_set(&v[i], j,
                  2.0 * cf_unit(cf_mix(cf_hash(c->id, env->values.seed), 1000u * (i + 2) + (uint64_t)j)) - 1.0);
    fwd.in[i] = &x[i];
  }
  for (uint32_t i = 0; i < c->nout; i++) fwd.out[i] = &c->out[i];
  if (cf_host_alloc(&dy, &c->out[0]) != 0) goto oom;
  cf_values_fill(&env->values, c, 0, c->dy_values, 1, &dy);

  cf_host_t y_spec_only = {.spec = c->out[0]};
  cf_backward_op(c, x, &y_spec_only, &dy, grads, &bop);
  cf_exec_status_t st = cf_supports(env->dev, &fwd, msg, sizeof msg);
  if (st == CF_EXEC_OK) st = cf_supports(env->dev, &bop, msg, sizeof msg);
  if (st != CF_EXEC_OK) {
    r->status = st == CF_EXEC_UNSUPPORTED ? CF_UNSUPPORTED : CF_FAIL;
    cf_result_note(r, "%s", msg);
    goto done;
  }
  if (!cf_device_run(env, &fwd, 0, y, r, "forward")) goto done;
  cf_backward_op(c, x, &y[0], &dy, grads, &bop);
  if (!cf_device_run(env, &bop, 0, g, r, "backward")) goto done;

  /* analytic directional derivative: gradients have the logical shape, v the stored one */
  double analytic = 0, scale = 0;
  for (uint32_t k = 0; k < bop.nout; k++) {
    int src = cf_grad_input(c->kind, k);
    if (src < 0 || !g[k].data) continue;
    cf_host_t ve;
    if (cf_host_expand(&v[src], &ve) != 0) goto oom;
    for (int64_t j = 0; j < ve.count; j++) {
      double t = cf_host_get(&g[k], j) * cf_host_get(&ve, j);
      analytic += t;
      scale += fabs(t);
    }
    cf_host_free(&ve);
  }
  double l[2], mag = 0;
  for (int side = 0; side < 2; side++) {
    for (uint32_t i = 0; i < c->nin; i++) {
      if (!c->has_in[i]) continue;
      int differentiable = 0;
      for (uint32_t k = 0; k < bop.nout; k++) differentiable |= cf_grad_input(c->kind, k) == (int)i;
      for (int64_t j = 0; j < x[i].count; j++)
        cf_host_set(&xs[i], j,
                    cf_host_get(&x[i], j) + (differentiable ? (side ? -FD_STEP : FD_STEP) * cf_host_get(&v[i], j) : 0));
      fwd.in[i] = &xs[i];
    }
    if (!cf_device_run(env, &fwd, side, yp, r, "forward at x + h v")) goto done;
    double a;
    l[side] = loss(&yp[0], &dy, &a);
    mag = fmax(mag, a);
    for (uint32_t i = 0; i < c->nout; i++) cf_host_free(&yp[i]);
  }
  double fd = (l[0] - l[1]) / (2 * FD_STEP);
  double tol = FD_REL * scale + FD_ROUND * mag + 1e-300;
  r->worst_ratio = fabs(fd - analytic) / tol;
  if (!(r->worst_ratio <= 1))
    cf_result_fail(r,
                   "backward disagrees with finite differences of forward: <grad, v> = %.12g, "
                   "(L(x+hv) - L(x-hv)) / 2h = %.12g (h %g, tolerance %.3g)",
                   analytic, fd, FD_STEP, tol);
  else
    cf_result_note(r, "<grad, v> = %.12g, finite difference %.12g", analytic, fd);
  goto done;
oom:
  cf_result_fail(r, "host out of memory");
done:
  for (uint32_t i = 0; i < PARITY_MAX_INPUTS; i++) cf_host_free(&x[i]), cf_host_free(&xs[i]), cf_host_free(&v[i]);
  for (uint32_t i = 0; i < PARITY_MAX_OUTPUTS; i++) cf_host_free(&y[i]), cf_host_free(&g[i]), cf_host_free(&yp[i]);
  cf_host_free(&dy);
}
