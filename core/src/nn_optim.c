/* nn_optim.c — SGD with momentum and Adam. Updates run as device ops in no-grad mode and are
 * written back into each parameter's storage, so parameters keep their identity.
 *
 * Capturable: everything a step reads or changes lives on the device — the moment buffers
 * (zeros from the start, so the first step runs the same ops as every other), the constants it
 * multiplies and adds (made at creation: a step launches no fill), the step count,
 * the learning rate (parity_optimizer_set_lr writes it) and Adam's bias corrections, computed
 * from the step count by device ops in float64 and cast to each parameter's dtype. On a device
 * without float64 (a dtype_mask without f64: Apple, Intel Arc and mobile GPUs) those scalars are
 * float32 instead: the step count is exact to 2^24 steps, and 1 - beta^t is formed without
 * cancellation (one_minus_pow_f32), within a few float ulps of the float64 path. A step
 * recorded in a plan therefore replays as the next step, not as a copy of the recorded one, and
 * eager and replayed training give bitwise the same parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/dtype.h"
#include "tensor_internal.h"

enum { OPT_MAX_CONSTS = 48 };
static parity_status_t prepare_consts(parity_optimizer_t *o);

struct parity_optimizer_t {
  int adam;
  double momentum, beta1, beta2, eps, weight_decay; /* weight_decay: AdamW's, decoupled */
  uint32_t count;
  parity_tensor_t **params;
  parity_tensor_t **m, **v; /* momentum / first moment, second moment (zeros at creation) */
  parity_tensor_t *lr;      /* 0-d sdt: the learning rate */
  parity_tensor_t *t;       /* 0-d sdt: steps taken */
  parity_dtype_t sdt;       /* the scalars' dtype: f64, or f32 on a device without float64 */
  /* the constants a step multiplies or adds (betas, eps, ...), 0-d tensors made once outside any
   * plan (prepare_consts), so a step launches no fill for them: what parity_mul_scalar and
   * parity_add_scalar would fill, the same values and so the same bits */
  struct {
    parity_device_t *dev;
    int32_t dtype;
    double value;
    parity_tensor_t *t;
  } consts[OPT_MAX_CONSTS];
  uint32_t nconsts;
};

static parity_status_t create(parity_tensor_t *const *params, uint32_t count, parity_optimizer_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer: out is NULL");
  *out = NULL;
  if (!params && count) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer: params is NULL");
  for (uint32_t i = 0; i < count; i++)
    if (!params[i] || !params[i]->requires_grad || params[i]->node || !parity_tensor_is_contiguous(params[i]))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "optimizer: parameter %u must be a contiguous leaf "
                          "tensor with requires_grad set",
                          i);
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

/* Device state: the scalars (on the first parameter's device) and, when `moments` > 0, that many
 * zero buffers per parameter. Created outside any plan being recorded is not required: fills of
 * zeros recorded in a plan would reset the state at every replay, so creation refuses to run
 * while the device records. */
static parity_status_t create_state(parity_optimizer_t *o, double lr, int moments) {
  if (o->count == 0) return PARITY_STATUS_OK;
  parity_device_t *dev = o->params[0]->st->dev;
  if (parity__recording(dev))
    return parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                        "optimizer: create it before recording a plan "
                        "(its state must exist outside the plan)");
  o->sdt = (dev->info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64)) ? PARITY_DTYPE_F64 : PARITY_DTYPE_F32;
  parity_status_t st = parity_tensor_full(dev, o->sdt, 0, NULL, lr, &o->lr);
  if (st == PARITY_STATUS_OK) st = parity_tensor_zeros(dev, o->sdt, 0, NULL, &o->t);
  for (uint32_t i = 0; i < o->count && st == PARITY_STATUS_OK; i++) {
    parity_tensor_t *p = o->params[i];
    if (moments >= 1) st = parity_tensor_zeros(p->st->dev, (parity_dtype_t)p->dtype, p->rank, p->shape, &o->m[i]);
    if (st == PARITY_STATUS_OK && moments >= 2)
      st = parity_tensor_zeros(p->st->dev, (parity_dtype_t)p->dtype, p->rank, p->shape, &o->v[i]);
  }
  /* the optimizer's own state: no scope the caller has open may release it */
  parity__adopt(o->lr);
  parity__adopt(o->t);
  for (uint32_t i = 0; i < o->count; i++) {
    if (o->m) parity__adopt(o->m[i]);
    if (o->v) parity__adopt(o->v[i]);
  }
  return st;
}

/* the hyper-parameters every optimizer refuses: a learning rate that is not finite or is negative */
static parity_status_t check_lr(const char *what, double lr) {
  if (!isfinite(lr) || lr < 0)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: lr %g must be a finite number >= 0", what, lr);
  return PARITY_STATUS_OK;
}

parity_status_t parity_sgd_create(parity_tensor_t *const *params, uint32_t count, double lr, double momentum,
                                  parity_optimizer_t **out) {
  if (out) *out = NULL;
  if (check_lr("sgd_create", lr) != PARITY_STATUS_OK) return PARITY_STATUS_INVALID_ARGUMENT;
  if (!(momentum >= 0 && momentum <= 1))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "sgd_create: momentum %g must be in [0, 1]", momentum);
  parity_status_t st = create(params, count, out);
  if (st != PARITY_STATUS_OK) return st;
  (*out)->momentum = momentum;
  st = create_state(*out, lr, momentum != 0 ? 1 : 0);
  if (st == PARITY_STATUS_OK) st = prepare_consts(*out);
  if (st != PARITY_STATUS_OK) {
    parity_optimizer_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* Warn where a parameter's dtype holds no number as small as eps: it rounds to 0 there (f16: eps
 * at most 2^-25, so the usual 1e-8), and where a gradient's square underflows (f16: |g| below about
 * 0.0077 with beta2 0.999) v stays 0 and the update divides by zero: the parameter becomes inf,
 * then NaN. PyTorch's Adam computes the same, so this is a warning, once per dtype, not a refusal. */
static void warn_lost_eps(const parity_optimizer_t *o) {
  uint32_t warned = 0;
  for (uint32_t i = 0; i < o->count; i++) {
    int32_t dt = o->params[i]->dtype;
    /* half the smallest subnormal of the dtype: the largest value that rounds to 0 there */
    int e = dt == PARITY_DTYPE_F16 ? -25 : dt == PARITY_DTYPE_BF16 ? -134 : dt == PARITY_DTYPE_F32 ? -150 : 0;
    if (!e || o->eps > ldexp(1.0, e) || (warned & PARITY_DTYPE_BIT(dt))) continue;
    warned |= PARITY_DTYPE_BIT(dt);
    parity__log(o->params[i]->st->dev->ctx, 1,
                "adam_create: eps %g is 0 in %s (parameter %u): where a gradient's square underflows to 0 "
                "the update divides by zero and the parameter becomes inf, then NaN; choose an eps that %s "
                "holds (%g or more; 1e-4 is usual for f16) or keep the parameters in f32",
                o->eps, psup_dtype_name(dt), i, psup_dtype_name(dt), ldexp(1.0, e + 1));
  }
}

parity_status_t parity_adam_create(parity_tensor_t *const *params, uint32_t count, double lr, double beta1,
                                   double beta2, double eps, parity_optimizer_t **out) {
  if (out) *out = NULL;
  if (check_lr("adam_create", lr) != PARITY_STATUS_OK) return PARITY_STATUS_INVALID_ARGUMENT;
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "adam_create: beta1 %g and beta2 %g must be in [0, 1)", beta1,
                        beta2);
  if (!(eps > 0 && isfinite(eps)))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "adam_create: eps %g must be a finite number > 0", eps);
  parity_status_t st = create(params, count, out);
  if (st != PARITY_STATUS_OK) return st;
  (*out)->adam = 1;
  (*out)->beta1 = beta1;
  (*out)->beta2 = beta2;
  (*out)->eps = eps;
  st = create_state(*out, lr, 2);
  if (st == PARITY_STATUS_OK) st = prepare_consts(*out);
  if (st == PARITY_STATUS_OK) warn_lost_eps(*out);
  if (st != PARITY_STATUS_OK) {
    parity_optimizer_destroy(*out);
    *out = NULL;
  }
  return st;
}

parity_status_t parity_adamw_create(parity_tensor_t *const *params, uint32_t count, double lr, double beta1,
                                    double beta2, double eps, double weight_decay, parity_optimizer_t **out) {
  if (out) *out = NULL;
  if (!(weight_decay >= 0 && isfinite(weight_decay)))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "adamw_create: weight_decay %g must be a finite number >= 0",
                        weight_decay);
  parity_status_t st = parity_adam_create(params, count, lr, beta1, beta2, eps, out);
  if (st == PARITY_STATUS_OK) (*out)->weight_decay = weight_decay;
  if (st == PARITY_STATUS_OK) st = prepare_consts(*out); /* and the decay's */
  if (st != PARITY_STATUS_OK && *out) {
    parity_optimizer_destroy(*out);
    *out = NULL;
  }
  return st;
}

parity_status_t parity_optimizer_set_lr(parity_optimizer_t *o, double lr) {
  if (!o) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer_set_lr: optimizer is NULL");
  if (check_lr("optimizer_set_lr", lr) != PARITY_STATUS_OK) return PARITY_STATUS_INVALID_ARGUMENT;
  if (!o->lr) return PARITY_STATUS_OK; /* no parameters */
  if (o->sdt == PARITY_DTYPE_F32) {
    float f = (float)lr;
    return parity_tensor_write(o->lr, &f, sizeof f);
  }
  return parity_tensor_write(o->lr, &lr, sizeof lr);
}

/* The constant `value` as a 0-d tensor of `dtype` on dev: the optimizer's own when it made one,
 * else made now (and kept when there is room; made while a plan records, it is a fill in the plan). */
static parity_status_t konst(parity_optimizer_t *o, parity_device_t *dev, int32_t dtype, double value,
                             parity_tensor_t **out) {
  for (uint32_t k = 0; k < o->nconsts; k++)
    if (o->consts[k].dev == dev && o->consts[k].dtype == dtype && !memcmp(&o->consts[k].value, &value, sizeof value)) {
      *out = parity_tensor_retain(o->consts[k].t);
      return PARITY_STATUS_OK;
    }
  parity_status_t st = parity_tensor_full(dev, (parity_dtype_t)dtype, 0, NULL, value, out);
  if (st == PARITY_STATUS_OK && o->nconsts < OPT_MAX_CONSTS && !parity__recording(dev)) {
    o->consts[o->nconsts].dev = dev;
    o->consts[o->nconsts].dtype = dtype;
    o->consts[o->nconsts].value = value;
    o->consts[o->nconsts++].t = parity__adopt(parity_tensor_retain(*out));
  }
  return st;
}

/* a op value, with the value from konst (parity_mul_scalar and parity_add_scalar, without a fill) */
static parity_status_t konst_op(parity_optimizer_t *o, parity_op_t op, parity_tensor_t *a, double value,
                                parity_tensor_t **out) {
  parity_tensor_t *k = NULL;
  parity_status_t st = konst(o, a->st->dev, a->dtype, value, &k);
  if (st == PARITY_STATUS_OK) st = parity_binary(op, a, k, out);
  parity_tensor_release(k);
  return st;
}

/* state = a * state + b * x, in place: the sum written straight into state (its operands are new
 * tensors), as parity_binary would compute it elsewhere */
static parity_status_t blend(parity_optimizer_t *o, parity_tensor_t *state, double a, parity_tensor_t *x, double b) {
  parity_tensor_t *bx = NULL, *as = NULL;
  parity_status_t st = konst_op(o, PARITY_OP_MUL, x, b, &bx);
  if (st == PARITY_STATUS_OK) st = konst_op(o, PARITY_OP_MUL, state, a, &as);
  if (st == PARITY_STATUS_OK) st = parity__binary_into(PARITY_OP_ADD, state, as, bx);
  parity_tensor_release(bx);
  parity_tensor_release(as);
  return st;
}

/* A 0-d device scalar in x's dtype (a retained s itself when that is its dtype). */
static parity_status_t scalar_as(parity_tensor_t *s, const parity_tensor_t *like, parity_tensor_t **out) {
  if (like->dtype == s->dtype) {
    *out = parity_tensor_retain(s);
    return PARITY_STATUS_OK;
  }
  return parity_cast(s, (parity_dtype_t)like->dtype, out);
}

/* p -= lr * u, in place (lr: a device scalar of p's dtype): the difference written straight into p,
 * which is the subtraction's first operand (an in-place elementwise forward, as the ABI allows) */
static parity_status_t apply(parity_tensor_t *p, parity_tensor_t *u, parity_tensor_t *lr) {
  parity_tensor_t *step = NULL;
  parity_status_t st = parity_binary(PARITY_OP_MUL, u, lr, &step);
  if (st == PARITY_STATUS_OK) st = parity__binary_into(PARITY_OP_SUB, p, p, step);
  parity_tensor_release(step);
  return st;
}

/* 1 - beta^t in float32 (a device without float64), without the cancellation of 1 - beta^t:
 * -expm1(t log(beta)) with expm1(y) = 2 tanh(y/2) / (1 - tanh(y/2)), log(beta)/2 from the host in
 * double rounded once; a few ulp where 1 - beta^t computed in float would lose ~2^-14 relative at
 * beta = 0.999. */
static double half_log(double beta) { return beta > 0 ? 0.5 * log(beta) : -INFINITY; }

static parity_status_t one_minus_pow_f32(parity_optimizer_t *o, parity_tensor_t *t, double beta,
                                         parity_tensor_t **out) {
  parity_tensor_t *h = NULL, *th = NULL, *num = NULL, *neg = NULL, *den = NULL;
  parity_status_t st = konst_op(o, PARITY_OP_MUL, t, half_log(beta), &h);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_TANH, h, &th);
  if (st == PARITY_STATUS_OK) st = konst_op(o, PARITY_OP_MUL, th, -2.0, &num);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_NEG, th, &neg);
  if (st == PARITY_STATUS_OK) st = konst_op(o, PARITY_OP_ADD, neg, 1.0, &den);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_DIV, num, den, out);
  parity_tensor_t *all[] = {h, th, num, neg, den};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) parity_tensor_release(all[k]);
  return st;
}

/* 1 / (1 - beta^t) as a 0-d device scalar of t's dtype. */
static parity_status_t inv_bias_correction(parity_optimizer_t *o, parity_tensor_t *t, double beta,
                                           parity_tensor_t **out) {
  parity_tensor_t *b = NULL, *bt = NULL, *one_minus = NULL, *neg = NULL;
  *out = NULL;
  parity_status_t st;
  if (t->dtype == PARITY_DTYPE_F32) {
    st = one_minus_pow_f32(o, t, beta, &one_minus);
  } else {
    st = konst(o, t->st->dev, t->dtype, beta, &b);
    if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_POW, b, t, &bt);
    if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_NEG, bt, &neg);
    if (st == PARITY_STATUS_OK) st = konst_op(o, PARITY_OP_ADD, neg, 1.0, &one_minus);
  }
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_RECIPROCAL, one_minus, out);
  parity_tensor_release(b);
  parity_tensor_release(bt);
  parity_tensor_release(neg);
  parity_tensor_release(one_minus);
  return st;
}

/* Make the constants a step uses (konst), here, outside any plan: the step counter's and the bias
 * corrections' in sdt, and each parameter dtype's. */
static parity_status_t prepare_consts(parity_optimizer_t *o) {
  if (o->count == 0) return PARITY_STATUS_OK;
  parity_device_t *dev = o->params[0]->st->dev;
  double sv[8];
  int ns = 0;
  sv[ns++] = 1.0;
  if (o->adam && o->sdt == PARITY_DTYPE_F32)
    sv[ns++] = half_log(o->beta1), sv[ns++] = half_log(o->beta2), sv[ns++] = -2.0;
  else if (o->adam)
    sv[ns++] = o->beta1, sv[ns++] = o->beta2;
  parity_status_t st = PARITY_STATUS_OK;
  parity_tensor_t *k = NULL;
  for (int j = 0; j < ns && st == PARITY_STATUS_OK; j++) {
    st = konst(o, dev, o->sdt, sv[j], &k);
    parity_tensor_release(k);
  }
  for (uint32_t i = 0; i < o->count && st == PARITY_STATUS_OK; i++) {
    double pv[6];
    int np = 0;
    if (o->adam) {
      pv[np++] = o->beta1, pv[np++] = 1.0 - o->beta1, pv[np++] = o->beta2, pv[np++] = 1.0 - o->beta2;
      pv[np++] = o->eps;
      if (o->weight_decay != 0) pv[np++] = o->weight_decay;
    } else if (o->momentum != 0) {
      pv[np++] = o->momentum, pv[np++] = 1.0;
    }
    for (int j = 0; j < np && st == PARITY_STATUS_OK; j++) {
      st = konst(o, o->params[i]->st->dev, o->params[i]->dtype, pv[j], &k);
      parity_tensor_release(k);
    }
  }
  return st;
}

/* A step's scalars in one parameter dtype (the learning rate, Adam's bias corrections, AdamW's
 * lr * decay), cast once per dtype and step rather than once per parameter: the same values. */
typedef struct step_scalars {
  int32_t dtype;
  parity_tensor_t *lr, *c1, *c2, *lr_wd;
} step_scalars;
enum { STEP_DTYPES = 8 };

static parity_status_t scalars_for(parity_optimizer_t *o, const parity_tensor_t *p, parity_tensor_t *ibc1,
                                   parity_tensor_t *ibc2, step_scalars *tab, uint32_t *n, step_scalars **out) {
  for (uint32_t k = 0; k < *n; k++)
    if (tab[k].dtype == p->dtype) {
      *out = &tab[k];
      return PARITY_STATUS_OK;
    }
  if (*n == STEP_DTYPES) return parity__fail(PARITY_STATUS_INTERNAL, "optimizer_step: parameters of too many dtypes");
  step_scalars *s = &tab[(*n)++];
  s->dtype = p->dtype;
  parity_status_t st = scalar_as(o->lr, p, &s->lr);
  if (st == PARITY_STATUS_OK && o->adam) st = scalar_as(ibc1, p, &s->c1);
  if (st == PARITY_STATUS_OK && o->adam) st = scalar_as(ibc2, p, &s->c2);
  if (st == PARITY_STATUS_OK && o->weight_decay != 0)
    st = konst_op(o, PARITY_OP_MUL, s->lr, o->weight_decay, &s->lr_wd);
  *out = s;
  return st;
}

/* u = (m * ibc1) / (sqrt(v * ibc2) + eps); p -= lr * u, with the scalars in p's dtype (sc). */
static parity_status_t adam_update(parity_optimizer_t *o, uint32_t i, parity_tensor_t *g, const step_scalars *sc) {
  parity_tensor_t *g2 = NULL, *den = NULL, *u = NULL, *mhat = NULL, *s = NULL, *r = NULL, *p = o->params[i];
  parity_status_t st = PARITY_STATUS_OK;
  if (o->weight_decay != 0) st = apply(p, p, sc->lr_wd); /* AdamW: p -= (lr * weight_decay) * p, first */
  if (st == PARITY_STATUS_OK) st = blend(o, o->m[i], o->beta1, g, 1.0 - o->beta1);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_SQUARE, g, &g2);
  if (st == PARITY_STATUS_OK) st = blend(o, o->v[i], o->beta2, g2, 1.0 - o->beta2);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_MUL, o->v[i], sc->c2, &s);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_SQRT, s, &r);
  if (st == PARITY_STATUS_OK) st = konst_op(o, PARITY_OP_ADD, r, o->eps, &den);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_MUL, o->m[i], sc->c1, &mhat);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_DIV, mhat, den, &u);
  if (st == PARITY_STATUS_OK) st = apply(p, u, sc->lr);
  parity_tensor_t *all[] = {g2, den, u, mhat, s, r};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) parity_tensor_release(all[k]);
  return st;
}

parity_status_t parity_optimizer_step(parity_optimizer_t *o) {
  if (!o) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer_step: optimizer is NULL");
  if (o->count == 0) return PARITY_STATUS_OK;
  int prev = parity_grad_mode_set(0);
  parity_tensor_t *t1 = NULL, *ibc1 = NULL, *ibc2 = NULL;
  parity_status_t st = konst_op(o, PARITY_OP_ADD, o->t, 1.0, &t1); /* t += 1, on the device */
  if (st == PARITY_STATUS_OK) st = parity__copy_into(o->t, t1);
  if (st == PARITY_STATUS_OK && o->adam) st = inv_bias_correction(o, o->t, o->beta1, &ibc1);
  if (st == PARITY_STATUS_OK && o->adam) st = inv_bias_correction(o, o->t, o->beta2, &ibc2);
  step_scalars tab[STEP_DTYPES], *sc = NULL;
  memset(tab, 0, sizeof tab);
  uint32_t ntab = 0;
  for (uint32_t i = 0; i < o->count && st == PARITY_STATUS_OK; i++) {
    parity_tensor_t *g = o->params[i]->grad;
    if (!g) continue;
    st = scalars_for(o, o->params[i], ibc1, ibc2, tab, &ntab, &sc);
    if (st != PARITY_STATUS_OK) break;
    if (o->adam) {
      st = adam_update(o, i, g, sc);
      continue;
    }
    if (o->momentum != 0) st = blend(o, o->m[i], o->momentum, g, 1.0);
    if (st == PARITY_STATUS_OK) st = apply(o->params[i], o->momentum != 0 ? o->m[i] : g, sc->lr);
  }
  for (uint32_t k = 0; k < ntab; k++) {
    parity_tensor_release(tab[k].lr);
    parity_tensor_release(tab[k].c1);
    parity_tensor_release(tab[k].c2);
    parity_tensor_release(tab[k].lr_wd);
  }
  parity_tensor_release(t1);
  parity_tensor_release(ibc1);
  parity_tensor_release(ibc2);
  parity_grad_mode_set(prev);
  return st;
}

parity_status_t parity_optimizer_zero_grad(parity_optimizer_t *o) {
  if (!o) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer_zero_grad: optimizer is NULL");
  for (uint32_t i = 0; i < o->count; i++) parity_tensor_zero_grad(o->params[i]);
  return PARITY_STATUS_OK;
}

parity_status_t parity_clip_grad_norm(parity_tensor_t *const *params, uint32_t count, double max_norm,
                                      double *total_norm) {
  if (total_norm) *total_norm = 0;
  if (!params && count) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "clip_grad_norm: params is NULL");
  if (!(max_norm > 0 && isfinite(max_norm)))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "clip_grad_norm: max_norm %g must be a finite number > 0",
                        max_norm);
  int prev = parity_grad_mode_set(0);
  double sum = 0;
  parity_status_t st = PARITY_STATUS_OK;
  /* the sum of squares, per gradient; f16 and bf16 gradients in f32 (in f16 a square past 65504, or
   * a sum, is inf, which refused every norm past 256, and a square under 2^-25 is 0) */
  for (uint32_t i = 0; i < count && st == PARITY_STATUS_OK; i++) {
    parity_tensor_t *g = params[i] ? params[i]->grad : NULL, *sq = NULL, *s = NULL, *w = NULL;
    if (!g) continue;
    double v = 0;
    if (psup_compute_dtype(g->dtype) != g->dtype) st = parity_cast(g, (parity_dtype_t)psup_compute_dtype(g->dtype), &w);
    if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_SQUARE, w ? w : g, &sq);
    if (st == PARITY_STATUS_OK) st = parity_reduce(PARITY_OP_SUM, sq, 0, 0, &s);
    if (st == PARITY_STATUS_OK) st = parity_tensor_item(s, &v);
    sum += v;
    parity_tensor_release(w);
    parity_tensor_release(sq);
    parity_tensor_release(s);
  }
  double norm = sqrt(sum);
  if (total_norm) *total_norm = norm;
  if (st == PARITY_STATUS_OK && !isfinite(norm))
    st = parity__fail(PARITY_STATUS_FAILED_PRECONDITION,
                      "clip_grad_norm: the gradients' norm is %g; nothing was "
                      "scaled",
                      norm);
  double coef = max_norm / (norm + 1e-6);
  for (uint32_t i = 0; i < count && st == PARITY_STATUS_OK && coef < 1; i++) {
    parity_tensor_t *g = params[i] ? params[i]->grad : NULL, *scaled = NULL;
    if (!g) continue;
    st = parity_mul_scalar(g, coef, &scaled);
    if (st == PARITY_STATUS_OK) st = parity__copy_into(g, scaled);
    parity_tensor_release(scaled);
  }
  parity_grad_mode_set(prev);
  return st;
}

double parity_lr_step(double base, double gamma, uint64_t step_size, uint64_t step) {
  return base * pow(gamma, (double)(step / (step_size ? step_size : 1)));
}

double parity_lr_cosine(double base, double min, uint64_t step, uint64_t total) {
  if (!total) total = 1;
  if (step > total) step = total;
  return min + (base - min) * (1 + cos(3.14159265358979323846 * (double)step / (double)total)) / 2;
}

/* The state in a fixed order: step, lr, then per parameter its moments (m before v). */
uint32_t parity_optimizer_state_count(const parity_optimizer_t *o) {
  if (!o || !o->lr) return 0;
  uint32_t per = o->adam ? 2u : o->momentum != 0 ? 1u : 0u;
  return 2 + per * o->count;
}

parity_status_t parity_optimizer_state(const parity_optimizer_t *o, uint32_t index, parity_optimizer_state_t *out) {
  if (!o || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "optimizer_state: NULL argument");
  uint32_t n = parity_optimizer_state_count(o);
  if (index >= n)
    return parity__fail(PARITY_STATUS_OUT_OF_RANGE, "optimizer_state: index %u; this optimizer has %u state tensors",
                        index, n);
  if (index < 2) {
    *out = (parity_optimizer_state_t){.name = index ? "lr" : "step", .param = -1, .tensor = index ? o->lr : o->t};
    return PARITY_STATUS_OK;
  }
  uint32_t k = index - 2, per = o->adam ? 2u : 1u, i = k / per, which = k % per;
  *out = (parity_optimizer_state_t){.name = o->adam ? (which ? "exp_avg_sq" : "exp_avg") : "momentum_buffer",
                                    .param = (int32_t)i,
                                    .tensor = which ? o->v[i] : o->m[i]};
  return PARITY_STATUS_OK;
}

int parity__optimizer_describe(const parity_optimizer_t *o, char *buf, size_t n) {
  if (!o) return snprintf(buf, n, "none");
  if (o->adam)
    return snprintf(buf, n, "%s beta1=%.17g beta2=%.17g eps=%.17g weight_decay=%.17g params=%u",
                    o->weight_decay != 0 ? "adamw" : "adam", o->beta1, o->beta2, o->eps, o->weight_decay, o->count);
  return snprintf(buf, n, "sgd momentum=%.17g params=%u", o->momentum, o->count);
}

void parity_optimizer_destroy(parity_optimizer_t *o) {
  if (!o) return;
  for (uint32_t i = 0; i < o->count; i++) {
    if (o->params) parity_tensor_release(o->params[i]);
    if (o->m) parity_tensor_release(o->m[i]);
    if (o->v) parity_tensor_release(o->v[i]);
  }
  parity_tensor_release(o->lr);
  parity_tensor_release(o->t);
  for (uint32_t k = 0; k < o->nconsts; k++) parity_tensor_release(o->consts[k].t);
  free(o->params);
  free(o->m);
  free(o->v);
  free(o);
}
