/* nn_optim.c — SGD with momentum and Adam. Updates run as device ops in no-grad mode and are
 * written back into each parameter's storage, so parameters keep their identity. */
#include <math.h>
#include <stdlib.h>

#include "tensor_internal.h"

struct parity_optimizer_t {
  int adam;
  double lr, momentum, beta1, beta2, eps;
  uint64_t step;
  uint32_t count;
  parity_tensor_t **params;
  parity_tensor_t **m, **v; /* momentum / first moment, second moment (lazily created) */
};

static parity_status_t create(parity_tensor_t *const *params, uint32_t count, parity_optimizer_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer: out is NULL");
  *out = NULL;
  if (!params && count) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer: params is NULL");
  for (uint32_t i = 0; i < count; i++)
    if (!params[i] || !params[i]->requires_grad || params[i]->node || !parity_tensor_is_contiguous(params[i]))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer: parameter %u must be a contiguous leaf "
                          "tensor with requires_grad set", i);
  parity_optimizer_t *o = calloc(1, sizeof *o);
  if (!o) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "optimizer: out of host memory");
  o->count = count;
  o->params = calloc(count ? count : 1, sizeof *o->params);
  o->m = calloc(count ? count : 1, sizeof *o->m);
  o->v = calloc(count ? count : 1, sizeof *o->v);
  if (!o->params || !o->m || !o->v) {
    parity_optimizer_destroy(o);
    return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "optimizer: out of host memory");
  }
  for (uint32_t i = 0; i < count; i++) o->params[i] = parity_tensor_retain(params[i]);
  *out = o;
  return PARITY_STATUS_OK;
}

parity_status_t parity_sgd_create(parity_tensor_t *const *params, uint32_t count, double lr, double momentum,
                                  parity_optimizer_t **out) {
  parity_status_t st = create(params, count, out);
  if (st == PARITY_STATUS_OK) {
    (*out)->lr = lr;
    (*out)->momentum = momentum;
  }
  return st;
}

parity_status_t parity_adam_create(parity_tensor_t *const *params, uint32_t count, double lr, double beta1,
                                   double beta2, double eps, parity_optimizer_t **out) {
  parity_status_t st = create(params, count, out);
  if (st == PARITY_STATUS_OK) {
    (*out)->adam = 1;
    (*out)->lr = lr;
    (*out)->beta1 = beta1;
    (*out)->beta2 = beta2;
    (*out)->eps = eps;
  }
  return st;
}

/* state = a * state + b * x (state created as b * x when NULL); returns the new state. */
static parity_status_t blend(parity_tensor_t **state, double a, parity_tensor_t *x, double b) {
  parity_tensor_t *bx = NULL, *as = NULL, *sum = NULL;
  parity_status_t st = parity_mul_scalar(x, b, &bx);
  if (st == PARITY_STATUS_OK && *state) st = parity_mul_scalar(*state, a, &as);
  if (st == PARITY_STATUS_OK && *state) st = parity_binary(PARITY_OP_ADD, as, bx, &sum);
  if (st == PARITY_STATUS_OK && *state) st = parity__copy_into(*state, sum);
  if (st == PARITY_STATUS_OK && !*state) {
    *state = bx;
    bx = NULL;
  }
  parity_tensor_release(bx);
  parity_tensor_release(as);
  parity_tensor_release(sum);
  return st;
}

/* p -= lr * u, in place. */
static parity_status_t apply(parity_tensor_t *p, parity_tensor_t *u, double lr) {
  parity_tensor_t *step = NULL, *np = NULL;
  parity_status_t st = parity_mul_scalar(u, lr, &step);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_SUB, p, step, &np);
  if (st == PARITY_STATUS_OK) st = parity__copy_into(p, np);
  parity_tensor_release(step);
  parity_tensor_release(np);
  return st;
}

static parity_status_t adam_update(parity_optimizer_t *o, uint32_t i, parity_tensor_t *g) {
  parity_tensor_t *g2 = NULL, *den = NULL, *u = NULL, *mhat = NULL, *s = NULL;
  parity_status_t st = blend(&o->m[i], o->beta1, g, 1.0 - o->beta1);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_SQUARE, g, &g2);
  if (st == PARITY_STATUS_OK) st = blend(&o->v[i], o->beta2, g2, 1.0 - o->beta2);
  double bc1 = 1.0 - pow(o->beta1, (double)o->step), bc2 = 1.0 - pow(o->beta2, (double)o->step);
  /* u = (m / bc1) / (sqrt(v / bc2) + eps) */
  if (st == PARITY_STATUS_OK) st = parity_mul_scalar(o->v[i], 1.0 / bc2, &s);
  if (st == PARITY_STATUS_OK) { parity_tensor_t *r = NULL; st = parity_unary(PARITY_OP_SQRT, s, &r); parity_tensor_release(s); s = r; }
  if (st == PARITY_STATUS_OK) st = parity_add_scalar(s, o->eps, &den);
  if (st == PARITY_STATUS_OK) st = parity_mul_scalar(o->m[i], 1.0 / bc1, &mhat);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_DIV, mhat, den, &u);
  if (st == PARITY_STATUS_OK) st = apply(o->params[i], u, o->lr);
  parity_tensor_release(g2);
  parity_tensor_release(den);
  parity_tensor_release(u);
  parity_tensor_release(mhat);
  parity_tensor_release(s);
  return st;
}

parity_status_t parity_optimizer_step(parity_optimizer_t *o) {
  if (!o) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer_step: optimizer is NULL");
  int prev = parity_grad_mode_set(0);
  parity_status_t st = PARITY_STATUS_OK;
  o->step++;
  for (uint32_t i = 0; i < o->count && st == PARITY_STATUS_OK; i++) {
    parity_tensor_t *g = o->params[i]->grad;
    if (!g) continue;
    if (o->adam) st = adam_update(o, i, g);
    else if (o->momentum != 0) {
      st = blend(&o->m[i], o->momentum, g, 1.0);
      if (st == PARITY_STATUS_OK) st = apply(o->params[i], o->m[i], o->lr);
    } else st = apply(o->params[i], g, o->lr);
  }
  parity_grad_mode_set(prev);
  return st;
}

void parity_optimizer_zero_grad(parity_optimizer_t *o) {
  for (uint32_t i = 0; o && i < o->count; i++) parity_tensor_zero_grad(o->params[i]);
}

void parity_optimizer_destroy(parity_optimizer_t *o) {
  if (!o) return;
  for (uint32_t i = 0; i < o->count; i++) {
    if (o->params) parity_tensor_release(o->params[i]);
    if (o->m) parity_tensor_release(o->m[i]);
    if (o->v) parity_tensor_release(o->v[i]);
  }
  free(o->params);
  free(o->m);
  free(o->v);
  free(o);
}
