/* hazard_layer_zoo.c — the layer zoo: common layers built from core ops, loss mean(f(x)), and
 * the gradient with respect to the input and every parameter compared with the CPU computing in
 * float64 from the same values: |got - ref| <= 1e-4 + 1e-4 |ref| (rtol = atol = 1e-4, f32). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hazard_tape.h"

typedef parity_status_t (*zoo_fn)(parity_tensor_t **p, parity_tensor_t **t);

typedef struct zoo_layer {
  const char *name;
  int32_t dtype;
  uint32_t n; /* p[0] is the input x, the rest are parameters */
  uint32_t rank[8];
  int64_t shape[8][4];
  zoo_fn fn; /* writes temporaries into t[0..15], the output last; returns the output index */
} zoo_layer;

#define Z(expr)                            \
  do {                                     \
    parity_status_t s_ = (expr);           \
    if (s_ != PARITY_STATUS_OK) return s_; \
  } while (0)

static const parity_conv2d_options_t pad1 = {
    .stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};

static parity_status_t dense(parity_tensor_t **p, parity_tensor_t **t) {
  return parity_linear(p[0], p[1], p[2], &t[0]);
}
static parity_status_t chain(parity_tensor_t **p, parity_tensor_t **t) {
  Z(parity_linear(p[0], p[1], p[2], &t[0]));
  Z(parity_unary(PARITY_OP_TANH, t[0], &t[1]));
  return parity_linear(t[1], p[3], p[4], &t[2]);
}
static parity_status_t scale(parity_tensor_t **p, parity_tensor_t **t) {
  Z(parity_binary(PARITY_OP_MUL, p[0], p[1], &t[0]));
  return parity_binary(PARITY_OP_ADD, t[0], p[2], &t[1]);
}
static parity_status_t conv(parity_tensor_t **p, parity_tensor_t **t) {
  return parity_conv2d(p[0], p[1], p[2], &pad1, &t[0]);
}
static parity_status_t conv_conv(parity_tensor_t **p, parity_tensor_t **t) {
  Z(parity_conv2d(p[0], p[1], p[2], &pad1, &t[0]));
  return parity_conv2d(t[0], p[3], p[4], NULL, &t[1]);
}
static parity_status_t conv_meanpool(parity_tensor_t **p, parity_tensor_t **t) {
  parity_pool2d_options_t same = {.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1, 1, 1}, .count_include_pad = 0};
  Z(parity_conv2d(p[0], p[1], p[2], &pad1, &t[0]));
  return parity_pool2d(PARITY_OP_AVG_POOL2D, t[0], &same, &t[1]);
}
static parity_status_t maxout(parity_tensor_t **p, parity_tensor_t **t) {
  Z(parity_linear(p[0], p[1], p[2], &t[0])); /* [4, 6] */
  Z(parity_reshape(t[0], 3, (int64_t[]){4, 3, 2}, &t[1]));
  return parity_reduce(PARITY_OP_MAX, t[1], 1u << 2, 0, &t[2]); /* [4, 3] */
}
static parity_status_t skip(parity_tensor_t **p, parity_tensor_t **t) {
  Z(parity_linear(p[0], p[1], p[2], &t[0]));
  Z(parity_unary(PARITY_OP_TANH, t[0], &t[1]));
  return parity_binary(PARITY_OP_ADD, p[0], t[1], &t[2]);
}
static parity_status_t bilinear(parity_tensor_t **p, parity_tensor_t **t) {
  return parity_bilinear(p[0], p[0], p[1], p[2], &t[0]);
}
static parity_status_t conv_transpose(parity_tensor_t **p, parity_tensor_t **t) {
  parity_conv2d_options_t o = {.stride = {2, 2}, .padding = {1, 1, 1, 1}, .dilation = {1, 1}, .groups = 1};
  return parity_conv_transpose2d(p[0], p[1], p[2], &o, &t[0]);
}
static parity_status_t layer_norm(parity_tensor_t **p, parity_tensor_t **t) {
  return parity_layer_norm(p[0], 1, p[1], p[2], 1e-5, &t[0]);
}
static parity_status_t batch_norm(parity_tensor_t **p, parity_tensor_t **t) {
  return parity_batch_norm(p[0], p[1], p[2], NULL, NULL, 1, 0.1, 1e-5, &t[0]);
}
static parity_status_t mha(parity_tensor_t **p, parity_tensor_t **t) {
  parity_mha_weights_t w = {
      .w_q = p[1], .w_k = p[2], .w_v = p[3], .w_o = p[4], .b_q = p[5], .b_k = p[6], .b_v = p[7], .num_heads = 2};
  return parity_multi_head_attention(p[0], p[0], p[0], &w, NULL, &t[0]);
}

#define F32 PARITY_DTYPE_F32
static const zoo_layer layers[] = {
    {"dense", F32, 3, {2, 2, 1}, {{4, 6}, {5, 6}, {5}}, dense},
    {"chain-dense-tanh-dense", F32, 5, {2, 2, 1, 2, 1}, {{4, 6}, {8, 6}, {8}, {3, 8}, {3}}, chain},
    {"chain-float64", PARITY_DTYPE_F64, 5, {2, 2, 1, 2, 1}, {{4, 6}, {8, 6}, {8}, {3, 8}, {3}}, chain},
    {"scale", F32, 3, {2, 1, 1}, {{4, 6}, {6}, {6}}, scale},
    {"conv", F32, 3, {4, 4, 1}, {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, conv},
    {"chain-conv-conv", F32, 5, {4, 4, 1, 4, 1}, {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}, {2, 4, 3, 3}, {2}}, conv_conv},
    {"conv-meanpool-same", F32, 3, {4, 4, 1}, {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, conv_meanpool},
    {"maxout", F32, 3, {2, 2, 1}, {{4, 6}, {6, 6}, {6}}, maxout},
    {"skip-connection", F32, 3, {2, 2, 1}, {{4, 6}, {6, 6}, {6}}, skip},
    {"bilinear", F32, 3, {2, 3, 1}, {{4, 6}, {2, 6, 6}, {2}}, bilinear},
    {"conv-transpose", F32, 3, {4, 4, 1}, {{2, 3, 4, 4}, {3, 2, 3, 3}, {2}}, conv_transpose},
    {"layer-norm", F32, 3, {2, 1, 1}, {{4, 6}, {6}, {6}}, layer_norm},
    {"batch-norm", F32, 3, {4, 1, 1}, {{4, 3, 2, 2}, {3}, {3}}, batch_norm},
    {"multi-head-attention",
     F32,
     8,
     {3, 2, 2, 2, 2, 1, 1, 1},
     {{2, 3, 4}, {4, 4}, {4, 4}, {4, 4}, {4, 4}, {4}, {4}, {4}},
     mha},
};

static int64_t numel(const zoo_layer *l, uint32_t i) {
  int64_t n = 1;
  for (uint32_t a = 0; a < l->rank[i]; a++) n *= l->shape[i][a];
  return n;
}

/* Run one layer on dev in dtype; grads[i] receives d mean(f(x)) / d p[i] (malloc'ed). */
static parity_status_t run_layer(parity_device_t *dev, const zoo_layer *l, int32_t dtype, double **values,
                                 double **grads, const char **what) {
  parity_tensor_t *p[8] = {0}, *t[16] = {0}, *loss = NULL;
  parity_status_t st = PARITY_STATUS_OK;
  *what = "creating tensors";
  for (uint32_t i = 0; i < l->n && st == PARITY_STATUS_OK; i++)
    p[i] = ht_tensor(dev, dtype, l->rank[i], l->shape[i], values[i], 1, &st);
  if (st == PARITY_STATUS_OK) {
    *what = "forward";
    st = l->fn(p, t);
  }
  int last = 15;
  while (last > 0 && !t[last]) last--;
  if (st == PARITY_STATUS_OK) st = parity_reduce(PARITY_OP_MEAN, t[last], 0, 0, &loss);
  if (st == PARITY_STATUS_OK) {
    *what = "backward";
    st = parity_backward(loss, NULL, 0);
  }
  for (uint32_t i = 0; i < l->n && st == PARITY_STATUS_OK; i++) {
    int64_t n;
    grads[i] = ht_read(parity_tensor_grad(p[i]), &n);
    if (!grads[i] || !parity_tensor_grad(p[i])) {
      *what = "reading gradients";
      st = PARITY_STATUS_INTERNAL;
    }
  }
  parity_tensor_release(loss);
  for (int i = 0; i < 16; i++) parity_tensor_release(t[i]);
  for (uint32_t i = 0; i < l->n; i++) parity_tensor_release(p[i]);
  return st;
}

static void zoo_check(cf_env_t *env, cf_result_t *r, const zoo_layer *l) {
  ht_set_dtype(r, l->dtype);
  if (!env->oracle) {
    r->status = CF_SKIPPED;
    cf_result_note(r, "no CPU oracle");
    return;
  }
  double *values[8] = {0}, *got[8] = {0}, *ref[8] = {0};
  for (uint32_t i = 0; i < l->n; i++) {
    values[i] = malloc((size_t)numel(l, i) * sizeof(double));
    ht_values(values[i], numel(l, i), cf_hash(l->name, i), i == 0 ? 1.0 : 0.6, l->dtype);
  }
  const char *what;
  parity_status_t st = run_layer(env->dev, l, l->dtype, values, got, &what);
  if (st != PARITY_STATUS_OK)
    ht_call_failed(r, st, what);
  else if ((st = run_layer(env->oracle, l, PARITY_DTYPE_F64, values, ref, &what)) != PARITY_STATUS_OK)
    cf_result_fail(r, "oracle %s failed: %s", what, parity_last_error());
  else {
    /* per tensor: the rtol = atol rule; over all gradients together: cosine and norm ratio
     * (single gradients can be exactly zero by symmetry, e.g. attention's key bias) */
    double worst = 0;
    int64_t total = 0;
    for (uint32_t i = 0; i < l->n; i++) total += numel(l, i);
    double *ga = malloc((size_t)total * sizeof *ga), *ra = malloc((size_t)total * sizeof *ra);
    for (uint32_t i = 0, off = 0; i < l->n; off += (uint32_t)numel(l, i), i++) {
      double w = ht_compare(got[i], ref[i], numel(l, i), 1e-4, 1e-4, NULL, NULL);
      if (w > 1)
        cf_result_fail(r, "gradient of %s %u off by %.3g x the rtol=atol=1e-4 bound", i ? "parameter" : "input", i, w);
      if (w > worst) worst = w;
      memcpy(ga + off, got[i], (size_t)numel(l, i) * sizeof *ga);
      memcpy(ra + off, ref[i], (size_t)numel(l, i) * sizeof *ra);
    }
    ht_compare(ga, ra, total, 1, 0, &r->cosine, &r->norm_ratio);
    free(ga);
    free(ra);
    r->worst_ratio = worst;
    if (r->status == CF_PASS) cf_result_note(r, "input and %u parameter gradients within rtol = atol = 1e-4", l->n - 1);
  }
  for (uint32_t i = 0; i < 8; i++) {
    free(values[i]);
    free(got[i]);
    free(ref[i]);
  }
}

#define ZOO(i, fn_name) \
  void fn_name(cf_env_t *env, cf_result_t *r) { zoo_check(env, r, &layers[i]); }
ZOO(0, cf_hazard_zoo_dense)
ZOO(1, cf_hazard_zoo_chain)
ZOO(2, cf_hazard_zoo_chain_f64)
ZOO(3, cf_hazard_zoo_scale)
ZOO(4, cf_hazard_zoo_conv)
ZOO(5, cf_hazard_zoo_conv_conv)
ZOO(6, cf_hazard_zoo_conv_meanpool)
ZOO(7, cf_hazard_zoo_maxout)
ZOO(8, cf_hazard_zoo_skip)
ZOO(9, cf_hazard_zoo_bilinear)
ZOO(10, cf_hazard_zoo_conv_transpose)
ZOO(11, cf_hazard_zoo_layer_norm)
ZOO(12, cf_hazard_zoo_batch_norm)
ZOO(13, cf_hazard_zoo_mha)
_Static_assert(sizeof layers / sizeof layers[0] == 14, "one check function per zoo layer");
