/* nn_layers.c — layers and losses composed from core ops; gradients come from those ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/dtype.h"
#include "tensor_internal.h"

/* Temporaries of one composite, released together. */
typedef struct {
  parity_tensor_t *t[48];
  int n;
} temps;

/* The next free slot; NEW() claims it once the call that fills it succeeded, so arguments may
 * read the previous temporary (tl.t[tl.n - 1]) in the same call. */
static parity_tensor_t **slot(temps *tl) { return &tl->t[tl->n]; }
static void temps_free(temps *tl) {
  for (int i = 0; i < tl->n; i++) parity__release_temp(tl->t[i]);
}
#define TRY(expr)                          \
  do {                                     \
    st = (expr);                           \
    if (st != PARITY_STATUS_OK) goto done; \
  } while (0)
#define NEW(tl, expr)                      \
  do {                                     \
    st = (expr);                           \
    if (st != PARITY_STATUS_OK) goto done; \
    (tl)->n++;                             \
  } while (0)
/* The last temporary, handed to the caller instead of released. */
static parity_tensor_t *take(temps *tl) {
  parity_tensor_t *t = tl->t[tl->n - 1];
  tl->t[--tl->n] = NULL;
  return t;
}

parity_status_t parity_scalar_like(const parity_tensor_t *x, double value, parity_tensor_t **out) {
  if (!x || !out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "scalar_like: NULL argument");
  return parity_tensor_full(x->st->dev, (parity_dtype_t)x->dtype, 0, NULL, value, out);
}

static parity_status_t scalar_op(parity_op_t op, parity_tensor_t *a, double value, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "scalar op: out is NULL");
  *out = NULL;
  parity_tensor_t *s = NULL;
  parity_status_t st = parity_scalar_like(a, value, &s);
  if (st == PARITY_STATUS_OK) st = parity_binary(op, a, s, out);
  parity__release_temp(s);
  return st;
}

parity_status_t parity_mul_scalar(parity_tensor_t *a, double v, parity_tensor_t **out) {
  return scalar_op(PARITY_OP_MUL, a, v, out);
}
parity_status_t parity_add_scalar(parity_tensor_t *a, double v, parity_tensor_t **out) {
  return scalar_op(PARITY_OP_ADD, a, v, out);
}

static parity_status_t linear_impl(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *b, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "linear: out is NULL");
  *out = NULL;
  if (!x || !w) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "linear: input or weight is NULL");
  char sx[96], sw[96];
  if (w->rank != 2 || x->rank < 1 || x->shape[x->rank - 1] != w->shape[1])
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "linear: input %s and weight %s: need [.., in] and [out, in]",
                        parity__shape_str(x, sx, sizeof sx), parity__shape_str(w, sw, sizeof sw));
  temps tl = {0};
  parity_status_t st;
  parity_tensor_t *x2 = x;
  if (x->rank == 1) {
    NEW(&tl, parity_unsqueeze(x, 0, slot(&tl)));
    x2 = tl.t[tl.n - 1];
  }
  NEW(&tl, parity_transpose(w, 0, 1, slot(&tl)));
  NEW(&tl, parity_matmul(x2, tl.t[tl.n - 1], slot(&tl)));
  if (b) NEW(&tl, parity_binary(PARITY_OP_ADD, tl.t[tl.n - 1], b, slot(&tl)));
  if (x->rank == 1) NEW(&tl, parity_squeeze(tl.t[tl.n - 1], 0, slot(&tl)));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

parity_status_t parity_bilinear(parity_tensor_t *x1, parity_tensor_t *x2, parity_tensor_t *w, parity_tensor_t *b,
                                parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "bilinear: out is NULL");
  *out = NULL;
  if (!x1 || !x2 || !w) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "bilinear: NULL input");
  char s1[96], s2[96], sw[96];
  if (x1->rank != 2 || x2->rank != 2 || w->rank != 3 || x1->shape[0] != x2->shape[0] || w->shape[1] != x1->shape[1] ||
      w->shape[2] != x2->shape[1])
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "bilinear: %s, %s and weight %s: need [n, in1], [n, in2] "
                        "and [out, in1, in2]",
                        parity__shape_str(x1, s1, sizeof s1), parity__shape_str(x2, s2, sizeof s2),
                        parity__shape_str(w, sw, sizeof sw));
  int64_t n = x1->shape[0], k = w->shape[0], in1 = w->shape[1], in2 = w->shape[2];
  temps tl = {0};
  parity_status_t st;
  int32_t perm[3] = {1, 0, 2};
  NEW(&tl, parity_permute(w, perm, slot(&tl))); /* [in1, k, in2] */
  NEW(&tl, parity_reshape(tl.t[tl.n - 1], 2, (int64_t[]){in1, k * in2}, slot(&tl)));
  NEW(&tl, parity_matmul(x1, tl.t[tl.n - 1], slot(&tl))); /* [n, k*in2] */
  NEW(&tl, parity_reshape(tl.t[tl.n - 1], 3, (int64_t[]){n, k, in2}, slot(&tl)));
  parity_tensor_t *t = tl.t[tl.n - 1];
  NEW(&tl, parity_unsqueeze(x2, 1, slot(&tl))); /* [n, 1, in2] */
  NEW(&tl, parity_binary(PARITY_OP_MUL, t, tl.t[tl.n - 1], slot(&tl)));
  NEW(&tl, parity_reduce(PARITY_OP_SUM, tl.t[tl.n - 1], 1u << 2, 0, slot(&tl))); /* [n, k] */
  if (b) NEW(&tl, parity_binary(PARITY_OP_ADD, tl.t[tl.n - 1], b, slot(&tl)));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

/* (x - mean) * rsqrt(var + eps) over the axes in mask (keepdim), biased variance, as the last of tl's
 * temporaries, in x's dtype. An f16 or bf16 x is normalised in f32 (PyTorch's norms accumulate in
 * f32 too): in f16 a squared deviation past 65504 (|x - mean| > 256) is inf, which made the whole
 * row 0. The mean and variance it hands out are then f32. */
static parity_status_t normalize(temps *tl, parity_tensor_t *x, uint32_t mask, double eps, parity_tensor_t **mean_out,
                                 parity_tensor_t **var_out) {
  parity_status_t st;
  int32_t dt = x->dtype;
  if (psup_compute_dtype(dt) != dt) {
    NEW(tl, parity_cast(x, (parity_dtype_t)psup_compute_dtype(dt), slot(tl)));
    x = tl->t[tl->n - 1];
  }
  NEW(tl, parity_reduce(PARITY_OP_MEAN, x, mask, 1, slot(tl)));
  parity_tensor_t *mean = tl->t[tl->n - 1];
  NEW(tl, parity_binary(PARITY_OP_SUB, x, mean, slot(tl)));
  parity_tensor_t *xc = tl->t[tl->n - 1];
  NEW(tl, parity_unary(PARITY_OP_SQUARE, xc, slot(tl)));
  NEW(tl, parity_reduce(PARITY_OP_MEAN, tl->t[tl->n - 1], mask, 1, slot(tl)));
  parity_tensor_t *var = tl->t[tl->n - 1];
  NEW(tl, parity_add_scalar(var, eps, slot(tl)));
  NEW(tl, parity_unary(PARITY_OP_RSQRT, tl->t[tl->n - 1], slot(tl)));
  NEW(tl, parity_binary(PARITY_OP_MUL, xc, tl->t[tl->n - 1], slot(tl)));
  if (x->dtype != dt) NEW(tl, parity_cast(tl->t[tl->n - 1], (parity_dtype_t)dt, slot(tl)));
  if (mean_out) *mean_out = mean;
  if (var_out) *var_out = var;
done:
  return st;
}

/* y * gamma + beta with gamma/beta reshaped to `shape` (either may be NULL). */
static parity_status_t affine(temps *tl, parity_tensor_t *y, parity_tensor_t *gamma, parity_tensor_t *beta,
                              uint32_t rank, const int64_t *shape) {
  parity_status_t st = PARITY_STATUS_OK;
  parity_tensor_t *cur = y;
  if (gamma) {
    NEW(tl, parity_reshape(gamma, rank, shape, slot(tl)));
    NEW(tl, parity_binary(PARITY_OP_MUL, cur, tl->t[tl->n - 1], slot(tl)));
    cur = tl->t[tl->n - 1];
  }
  if (beta) {
    NEW(tl, parity_reshape(beta, rank, shape, slot(tl)));
    NEW(tl, parity_binary(PARITY_OP_ADD, cur, tl->t[tl->n - 1], slot(tl)));
  }
done:
  return st;
}

static int same_dims(const parity_tensor_t *t, uint32_t rank, const int64_t *shape) {
  if (t->rank != rank) return 0;
  for (uint32_t i = 0; i < rank; i++)
    if (t->shape[i] != shape[i]) return 0;
  return 1;
}

parity_status_t parity_layer_norm(parity_tensor_t *x, uint32_t axes, parity_tensor_t *gamma, parity_tensor_t *beta,
                                  double eps, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "layer_norm: out is NULL");
  *out = NULL;
  if (!(eps >= 0 && isfinite(eps)))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "layer_norm: eps %g must be a finite number >= 0", eps);
  if (axes == 0) axes = 1;
  if (!x || x->rank < axes)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "layer_norm: input must have rank >= %u (the normalised "
                        "axes)%s",
                        axes, x ? "" : ", got NULL");
  const int64_t *norm = x->shape + (x->rank - axes); /* the normalised axes' sizes */
  char a[96], g[96];
  if ((gamma && !same_dims(gamma, axes, norm)) || (beta && !same_dims(beta, axes, norm))) {
    parity_tensor_t *bad = gamma && !same_dims(gamma, axes, norm) ? gamma : beta;
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "layer_norm: gamma and beta must have the shape of the last "
                        "%u axes of input %s; got %s",
                        axes, parity__shape_str(x, a, sizeof a), parity__shape_str(bad, g, sizeof g));
  }
  uint32_t mask = (uint32_t)(((1ull << axes) - 1) << (x->rank - axes));
  temps tl = {0};
  parity_status_t st;
  TRY(normalize(&tl, x, mask, eps, NULL, NULL));
  TRY(affine(&tl, tl.t[tl.n - 1], gamma, beta, axes, norm));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

/* running = (1 - m) * running + m * stat, in place, recording nothing; stat (f32 for an f16 or bf16
 * input, normalize) in running's dtype. */
static parity_status_t update_running(parity_tensor_t *running, parity_tensor_t *stat, double m, double scale) {
  temps tl = {0};
  parity_status_t st;
  int prev = parity_grad_mode_set(0);
  if (stat->dtype != running->dtype) {
    NEW(&tl, parity_cast(stat, (parity_dtype_t)running->dtype, slot(&tl)));
    stat = tl.t[tl.n - 1];
  }
  NEW(&tl, parity_reshape(stat, 1, running->shape, slot(&tl)));
  NEW(&tl, parity_mul_scalar(tl.t[tl.n - 1], m * scale, slot(&tl)));
  parity_tensor_t *a = tl.t[tl.n - 1];
  NEW(&tl, parity_mul_scalar(running, 1.0 - m, slot(&tl)));
  TRY(parity__binary_into(PARITY_OP_ADD, running, tl.t[tl.n - 1], a));
done:
  parity_grad_mode_set(prev);
  temps_free(&tl);
  return st;
}

parity_status_t parity_batch_norm(parity_tensor_t *x, parity_tensor_t *gamma, parity_tensor_t *beta,
                                  parity_tensor_t *running_mean, parity_tensor_t *running_var, int training,
                                  double momentum, double eps, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "batch_norm: out is NULL");
  *out = NULL;
  if (!(eps >= 0 && isfinite(eps)) || !(momentum >= 0 && momentum <= 1))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "batch_norm: eps %g must be a finite number >= 0 and momentum "
                        "%g in [0, 1]",
                        eps, momentum);
  if (!x || x->rank < 2) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "batch_norm: input must be [N, C, ...]");
  int64_t C = x->shape[1], shape[PARITY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) shape[i] = i == 1 ? C : 1;
  parity_tensor_t *params[4] = {gamma, beta, running_mean, running_var};
  for (int i = 0; i < 4; i++)
    if (params[i] && (params[i]->rank != 1 || params[i]->shape[0] != C))
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "batch_norm: gamma, beta and running stats must be [%lld]",
                          (long long)C);
  if (!training && (!running_mean || !running_var))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "batch_norm: evaluation needs running mean and variance");
  temps tl = {0};
  parity_status_t st;
  uint32_t mask = (uint32_t)((1ull << x->rank) - 1) & ~2u;
  if (training) {
    parity_tensor_t *mean = NULL, *var = NULL;
    TRY(normalize(&tl, x, mask, eps, &mean, &var));
    parity_tensor_t *y = tl.t[tl.n - 1];
    double count = (double)parity_tensor_numel(x) / (double)(C ? C : 1);
    if (running_mean) TRY(update_running(running_mean, mean, momentum, 1.0));
    if (running_var) TRY(update_running(running_var, var, momentum, count > 1 ? count / (count - 1) : 1.0));
    TRY(affine(&tl, y, gamma, beta, x->rank, shape));
  } else {
    NEW(&tl, parity_reshape(running_mean, x->rank, shape, slot(&tl)));
    NEW(&tl, parity_binary(PARITY_OP_SUB, x, tl.t[tl.n - 1], slot(&tl)));
    parity_tensor_t *xc = tl.t[tl.n - 1];
    NEW(&tl, parity_reshape(running_var, x->rank, shape, slot(&tl)));
    NEW(&tl, parity_add_scalar(tl.t[tl.n - 1], eps, slot(&tl)));
    NEW(&tl, parity_unary(PARITY_OP_RSQRT, tl.t[tl.n - 1], slot(&tl)));
    NEW(&tl, parity_binary(PARITY_OP_MUL, xc, tl.t[tl.n - 1], slot(&tl)));
    TRY(affine(&tl, tl.t[tl.n - 1], gamma, beta, x->rank, shape));
  }
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

parity_status_t parity_dropout(parity_tensor_t *x, double p, int training, uint64_t seed, uint64_t offset,
                               parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "dropout: out is NULL");
  *out = NULL;
  if (!x) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "dropout: input is NULL");
  if (!(p >= 0 && p < 1)) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "dropout: p = %g must be in [0, 1)", p);
  if (!training || p == 0) { return parity__identity_view(x, "dropout", out); }
  temps tl = {0};
  parity_status_t st;
  /* keep where u >= p, scaled by 1/(1-p); u from the counter-based generator */
  NEW(&tl,
      parity_tensor_rand_uniform(x->st->dev, PARITY_DTYPE_F32, x->rank, x->shape, 0.0, 1.0, seed, offset, slot(&tl)));
  NEW(&tl, parity_scalar_like(tl.t[tl.n - 1], p, slot(&tl)));
  NEW(&tl, parity_compare(PARITY_OP_GE, tl.t[tl.n - 2], tl.t[tl.n - 1], slot(&tl)));
  parity_tensor_t *keep = tl.t[tl.n - 1];
  NEW(&tl, parity_mul_scalar(x, 1.0 / (1.0 - p), slot(&tl)));
  parity_tensor_t *scaled = tl.t[tl.n - 1];
  NEW(&tl, parity_scalar_like(x, 0.0, slot(&tl)));
  NEW(&tl, parity_where(keep, scaled, tl.t[tl.n - 1], slot(&tl)));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

/* [N, L, E] -> [N, H, L, D] */
static parity_status_t split_heads(temps *tl, parity_tensor_t *x, int64_t h) {
  int64_t n = x->shape[0], l = x->shape[1], e = x->shape[2];
  parity_status_t st;
  NEW(tl, parity_reshape(x, 4, (int64_t[]){n, l, h, e / h}, slot(tl)));
  NEW(tl, parity_permute(tl->t[tl->n - 1], (int32_t[]){0, 2, 1, 3}, slot(tl)));
done:
  return st;
}

void parity_attention_options_init(parity_attention_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
}

/* scores + the caller's additive mask (cast to the scores' dtype) + the causal mask. */
static parity_status_t mask_scores(temps *tl, parity_tensor_t *scores, const parity_attention_options_t *o) {
  parity_status_t st = PARITY_STATUS_OK;
  int64_t lq = scores->shape[2], lk = scores->shape[3];
  if (o->mask) {
    parity_tensor_t *m = o->mask;
    if (m->dtype != scores->dtype) {
      NEW(tl, parity_cast(m, (parity_dtype_t)scores->dtype, slot(tl)));
      m = tl->t[tl->n - 1];
    }
    NEW(tl, parity_binary(PARITY_OP_ADD, scores, m, slot(tl)));
    scores = tl->t[tl->n - 1];
  }
  if (o->causal) {
    double *c = malloc((size_t)(lq * lk) * sizeof *c);
    if (!c) return parity__fail(PARITY_STATUS_OUT_OF_MEMORY, "multi_head_attention: out of host memory");
    for (int64_t i = 0; i < lq; i++)
      for (int64_t j = 0; j < lk; j++) c[i * lk + j] = j <= i ? 0.0 : -INFINITY;
    st = parity_tensor_from_f64(scores->st->dev, (parity_dtype_t)scores->dtype, 2, (int64_t[]){lq, lk}, c, slot(tl));
    free(c);
    if (st != PARITY_STATUS_OK) goto done;
    tl->n++;
    NEW(tl, parity_binary(PARITY_OP_ADD, scores, tl->t[tl->n - 1], slot(tl)));
  }
done:
  return st;
}

parity_status_t parity_multi_head_attention(parity_tensor_t *q, parity_tensor_t *k, parity_tensor_t *v,
                                            const parity_mha_weights_t *w, const parity_attention_options_t *opts,
                                            parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "multi_head_attention: out is NULL");
  *out = NULL;
  if (!q || !k || !v || !w || !w->w_q || !w->w_k || !w->w_v || !w->w_o)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "multi_head_attention: NULL input or weight");
  char sq[96], sk[96];
  if (q->rank != 3 || k->rank != 3 || v->rank != 3 || k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0] ||
      k->shape[1] != v->shape[1] || k->shape[2] != q->shape[2] || v->shape[2] != q->shape[2] || !w->num_heads ||
      q->shape[2] % w->num_heads)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "multi_head_attention: q %s, k %s: need [N, L, E] inputs "
                        "sharing N and E, k and v sharing L, and %u heads dividing E",
                        parity__shape_str(q, sq, sizeof sq), parity__shape_str(k, sk, sizeof sk), w->num_heads);
  int64_t n = q->shape[0], lq = q->shape[1], e = q->shape[2], h = w->num_heads;
  parity_attention_options_t o;
  parity__read_options(opts, &o, sizeof o);
  if (!isfinite(o.scale))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "multi_head_attention: scale %g is not finite (0: 1 / "
                        "sqrt(E / heads))",
                        o.scale);
  if (o.mask && !psup_dtype_is_float(o.mask->dtype))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                        "multi_head_attention: the mask is additive and must be a "
                        "float tensor (-inf where a query must not attend), got %s",
                        psup_dtype_name(o.mask->dtype));
  if (o.mask) {
    int64_t full[4] = {n, h, lq, k->shape[1]};
    int fits = o.mask->rank <= 4;
    for (uint32_t i = 0; fits && i < o.mask->rank; i++) {
      int64_t d = o.mask->shape[o.mask->rank - 1 - i];
      fits = d == 1 || d == full[3 - i];
    }
    char sm[96];
    if (!fits)
      return parity__fail(PARITY_STATUS_INVALID_ARGUMENT,
                          "multi_head_attention: mask %s does not broadcast to the "
                          "scores [%lld, %lld, %lld, %lld] (N, heads, Lq, Lk)",
                          parity__shape_str(o.mask, sm, sizeof sm), (long long)full[0], (long long)full[1],
                          (long long)full[2], (long long)full[3]);
  }
  if (!isfinite(o.scale))
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "multi_head_attention: scale %g is not finite", o.scale);
  double scale = o.scale != 0 ? o.scale : 1.0 / sqrt((double)(e / h));
  temps tl = {0};
  parity_status_t st;
  NEW(&tl, parity_linear(q, w->w_q, w->b_q, slot(&tl)));
  TRY(split_heads(&tl, tl.t[tl.n - 1], h));
  /* q is scaled before the product, as PyTorch's attention does: in f16, q k^T past 65504 is inf
   * even where the scaled scores fit (E/heads = 16, q and k at 80: 102,400, scaled 25,600) */
  NEW(&tl, parity_mul_scalar(tl.t[tl.n - 1], scale, slot(&tl)));
  parity_tensor_t *qh = tl.t[tl.n - 1];
  NEW(&tl, parity_linear(k, w->w_k, w->b_k, slot(&tl)));
  TRY(split_heads(&tl, tl.t[tl.n - 1], h));
  parity_tensor_t *kh = tl.t[tl.n - 1];
  NEW(&tl, parity_linear(v, w->w_v, w->b_v, slot(&tl)));
  TRY(split_heads(&tl, tl.t[tl.n - 1], h));
  parity_tensor_t *vh = tl.t[tl.n - 1];
  NEW(&tl, parity_transpose(kh, 2, 3, slot(&tl)));
  NEW(&tl, parity_matmul(qh, tl.t[tl.n - 1], slot(&tl))); /* [N, H, Lq, Lk] */
  TRY(mask_scores(&tl, tl.t[tl.n - 1], &o));
  NEW(&tl, parity_softmax(PARITY_OP_SOFTMAX, tl.t[tl.n - 1], 3, slot(&tl)));
  NEW(&tl, parity_matmul(tl.t[tl.n - 1], vh, slot(&tl))); /* [N, H, Lq, D] */
  NEW(&tl, parity_permute(tl.t[tl.n - 1], (int32_t[]){0, 2, 1, 3}, slot(&tl)));
  NEW(&tl, parity_reshape(tl.t[tl.n - 1], 3, (int64_t[]){n, lq, e}, slot(&tl)));
  NEW(&tl, parity_linear(tl.t[tl.n - 1], w->w_o, w->b_o, slot(&tl)));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

static parity_status_t mse_loss_impl(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "mse_loss: out is NULL");
  *out = NULL;
  temps tl = {0};
  parity_status_t st;
  NEW(&tl, parity_binary(PARITY_OP_SUB, a, b, slot(&tl)));
  NEW(&tl, parity_unary(PARITY_OP_SQUARE, tl.t[tl.n - 1], slot(&tl)));
  NEW(&tl, parity_reduce(PARITY_OP_MEAN, tl.t[tl.n - 1], 0, 0, slot(&tl)));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

static parity_status_t cross_entropy_impl(parity_tensor_t *logits, parity_tensor_t *target, parity_tensor_t **out) {
  if (!out) return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "cross_entropy: out is NULL");
  *out = NULL;
  if (!logits || !target || logits->rank < 1)
    return parity__fail(PARITY_STATUS_INVALID_ARGUMENT, "cross_entropy: logits and target must be given");
  temps tl = {0};
  parity_status_t st;
  uint32_t last = logits->rank - 1;
  NEW(&tl, parity_softmax(PARITY_OP_LOG_SOFTMAX, logits, last, slot(&tl)));
  NEW(&tl, parity_binary(PARITY_OP_MUL, tl.t[tl.n - 1], target, slot(&tl)));
  NEW(&tl, parity_reduce(PARITY_OP_SUM, tl.t[tl.n - 1], 1u << last, 0, slot(&tl)));
  NEW(&tl, parity_reduce(PARITY_OP_MEAN, tl.t[tl.n - 1], 0, 0, slot(&tl)));
  NEW(&tl, parity_unary(PARITY_OP_NEG, tl.t[tl.n - 1], slot(&tl)));
  *out = take(&tl);
done:
  temps_free(&tl);
  return st;
}

parity_status_t parity_linear(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *b, parity_tensor_t **out) {
  const char *prev = parity__call_begin("linear");
  parity_status_t st = linear_impl(x, w, b, out);
  parity__call_end(prev);
  return parity__name_call(prev, "linear", st);
}

parity_status_t parity_mse_loss(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out) {
  const char *prev = parity__call_begin("mse_loss");
  parity_status_t st = mse_loss_impl(a, b, out);
  parity__call_end(prev);
  return parity__name_call(prev, "mse_loss", st);
}

parity_status_t parity_cross_entropy(parity_tensor_t *logits, parity_tensor_t *target, parity_tensor_t **out) {
  const char *prev = parity__call_begin("cross_entropy");
  parity_status_t st = cross_entropy_impl(logits, target, out);
  parity__call_end(prev);
  return parity__name_call(prev, "cross_entropy", st);
}
