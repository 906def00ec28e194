/* nn.h — layers and optimizers built from core ops (included by parity.h). Every layer is a
 * function of tensors the caller owns, differentiable through the ops it is made of.
 * Parameters use the usual layouts: linear weight [out, in], conv weight [O, C/groups, KH, KW]. */
#ifndef PARITY_NN_H
#define PARITY_NN_H

#include "parity/parity.h" /* the types; parity.h includes this header too */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- small helpers ------------------------------------------------------------------------- */
/* A 0-d tensor of x's dtype and device holding value (broadcasts against anything). */
PARITY_API parity_status_t parity_scalar_like(const parity_tensor_t *x, double value, parity_tensor_t **out);
/* a * value, a + value (differentiable in a). */
PARITY_API parity_status_t parity_mul_scalar(parity_tensor_t *a, double value, parity_tensor_t **out);
PARITY_API parity_status_t parity_add_scalar(parity_tensor_t *a, double value, parity_tensor_t **out);

/* ---- layers -------------------------------------------------------------------------------- */
/* x[.., in] @ w[out, in]^T + b[out] (b may be NULL). */
PARITY_API parity_status_t parity_linear(parity_tensor_t *x, parity_tensor_t *w, parity_tensor_t *b,
                                         parity_tensor_t **out);
/* y[n, k] = x1[n, :] · w[k, :, :] · x2[n, :] + b[k]. */
PARITY_API parity_status_t parity_bilinear(parity_tensor_t *x1, parity_tensor_t *x2, parity_tensor_t *w,
                                           parity_tensor_t *b, parity_tensor_t **out);
/* Normalise over the last `axes` axes (0 means 1: the last axis), then * gamma + beta, both
 * shaped as those axes (or NULL). */
PARITY_API parity_status_t parity_layer_norm(parity_tensor_t *x, uint32_t axes, parity_tensor_t *gamma,
                                             parity_tensor_t *beta, double eps, parity_tensor_t **out);
/* x[N, C, ...]. training: batch statistics (biased variance) and running stats updated in place
 * as (1 - momentum) * running + momentum * batch (unbiased variance); otherwise the running
 * statistics. gamma/beta [C] may be NULL; running_* [C] may be NULL in training. */
PARITY_API parity_status_t parity_batch_norm(parity_tensor_t *x, parity_tensor_t *gamma, parity_tensor_t *beta,
                                             parity_tensor_t *running_mean, parity_tensor_t *running_var, int training,
                                             double momentum, double eps, parity_tensor_t **out);
/* training: zero each element with probability p (counter-based: same seed/offset, same mask on
 * every backend) and scale the rest by 1/(1-p); otherwise x itself. */
PARITY_API parity_status_t parity_dropout(parity_tensor_t *x, double p, int training, uint64_t seed, uint64_t offset,
                                          parity_tensor_t **out);

typedef struct parity_mha_weights_t {
  parity_tensor_t *w_q, *w_k, *w_v, *w_o; /* [E, E] */
  parity_tensor_t *b_q, *b_k, *b_v, *b_o; /* [E] or NULL */
  uint32_t num_heads;                     /* divides E */
} parity_mha_weights_t;
/* Options of attention (struct_size first, zero fields mean their defaults: tensor.h). */
typedef struct parity_attention_options_t {
  uint32_t struct_size;
  parity_tensor_t *mask; /* added to the scores before softmax: a float tensor broadcastable to
                          * [N, heads, Lq, Lk] ([Lq, Lk], [N, 1, 1, Lk], ...), -inf where a query
                          * must not attend; NULL = none */
  int32_t causal;        /* non-zero: query i attends to keys j <= i only */
  double scale;          /* scores = (q * scale) k^T; 0 = 1 / sqrt(E / heads) */
} parity_attention_options_t;
PARITY_API void parity_attention_options_init(parity_attention_options_t *opts);
/* Multi-head attention: q[N, Lq, E], k and v [N, Lk, E] -> [N, Lq, E]. opts NULL = defaults. */
PARITY_API parity_status_t parity_multi_head_attention(parity_tensor_t *q, parity_tensor_t *k, parity_tensor_t *v,
                                                       const parity_mha_weights_t *w,
                                                       const parity_attention_options_t *opts, parity_tensor_t **out);

/* ---- losses -------------------------------------------------------------------------------- */
/* mean((a - b)^2) */
PARITY_API parity_status_t parity_mse_loss(parity_tensor_t *a, parity_tensor_t *b, parity_tensor_t **out);
/* -mean(sum(target * log_softmax(logits, last axis), last axis)); target has logits' shape. */
PARITY_API parity_status_t parity_cross_entropy(parity_tensor_t *logits, parity_tensor_t *target,
                                                parity_tensor_t **out);

/* ---- optimizers ---------------------------------------------------------------------------- */
typedef struct parity_optimizer_t parity_optimizer_t;
/* v = momentum * v + g; p -= lr * v (momentum 0: plain SGD). */
PARITY_API parity_status_t parity_sgd_create(parity_tensor_t *const *params, uint32_t count, double lr, double momentum,
                                             parity_optimizer_t **out);
/* Adam (Kingma & Ba) with bias correction. */
PARITY_API parity_status_t parity_adam_create(parity_tensor_t *const *params, uint32_t count, double lr, double beta1,
                                              double beta2, double eps, parity_optimizer_t **out);
/* AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, p *= 1 - lr * weight_decay before
 * each Adam update (PyTorch's torch.optim.AdamW). weight_decay >= 0. */
PARITY_API parity_status_t parity_adamw_create(parity_tensor_t *const *params, uint32_t count, double lr, double beta1,
                                               double beta2, double eps, double weight_decay, parity_optimizer_t **out);
/* The learning rate from now on (it lives on the device: a plan that recorded a step uses it). */
PARITY_API parity_status_t parity_optimizer_set_lr(parity_optimizer_t *opt, double lr);
/* Update every parameter in place from its .grad (parameters without a gradient are skipped).
 * Capturable: the moments, the step count, the learning rate and Adam's bias corrections live on
 * the device, so a step recorded in a plan replays as the next step. Create the optimizer before
 * recording. */
PARITY_API parity_status_t parity_optimizer_step(parity_optimizer_t *opt);
/* Drop every parameter's gradient (the next backward starts from zero). INVALID_ARGUMENT for NULL. */
PARITY_API parity_status_t parity_optimizer_zero_grad(parity_optimizer_t *opt);
PARITY_API void parity_optimizer_destroy(parity_optimizer_t *opt);

/* The optimizer's state, for checkpoints (parity/safetensors.h saves and loads it whole with
 * parity_checkpoint_save/load): index 0 "step" (0-d, steps taken), 1 "lr" (0-d), then for each
 * parameter in order its moments with PyTorch's names: "exp_avg" and "exp_avg_sq" (Adam, AdamW) or
 * "momentum_buffer" (SGD with momentum; plain SGD has none). The step and the learning rate are
 * f64, or f32 on a device without float64; moments have their parameter's dtype and shape. The
 * tensors are borrowed: they live as long as the optimizer. Writing into them (parity_tensor_write)
 * restores a state. count: 0 for NULL or an optimizer without parameters. */
typedef struct parity_optimizer_state_t {
  const char *name;        /* "step", "lr", "exp_avg", "exp_avg_sq", "momentum_buffer" */
  int32_t param;           /* the parameter's index, -1 for step and lr */
  parity_tensor_t *tensor; /* borrowed */
} parity_optimizer_state_t;
PARITY_API uint32_t parity_optimizer_state_count(const parity_optimizer_t *opt);
PARITY_API parity_status_t parity_optimizer_state(const parity_optimizer_t *opt, uint32_t index,
                                                  parity_optimizer_state_t *out);

/* Scale the gradients of params so that their joint L2 norm is at most max_norm (> 0), as PyTorch's
 * clip_grad_norm_: each gradient times max_norm / (norm + 1e-6) when that is below 1. *total_norm
 * (may be NULL) gets the norm before clipping. Reads one value per gradient back from the device.
 * A norm that is not finite is refused (FAILED_PRECONDITION), the gradients left as they are. */
PARITY_API parity_status_t parity_clip_grad_norm(parity_tensor_t *const *params, uint32_t count, double max_norm,
                                                 double *total_norm);

/* ---- learning-rate schedules: the rate for step `step` (0-based); pass it to optimizer_set_lr ---- */
/* base * gamma^floor(step / step_size) (PyTorch's StepLR); step_size >= 1. */
PARITY_API double parity_lr_step(double base, double gamma, uint64_t step_size, uint64_t step);
/* min + (base - min) * (1 + cos(pi * step / total)) / 2, step capped at total (PyTorch's
 * CosineAnnealingLR with T_max = total, eta_min = min); total >= 1. */
PARITY_API double parity_lr_cosine(double base, double min, uint64_t step, uint64_t total);

/* ---- initialisers ---------------------------------------------------------------------------- */
/* A position in a Philox stream: each draw uses elements offset, offset + 1, ... of stream `seed`
 * and advances offset past them, so successive initialisations never overlap without the caller
 * counting. */
typedef struct parity_generator_t {
  uint64_t seed, offset;
} parity_generator_t;

typedef enum parity_init_t {
  PARITY_INIT_XAVIER_UNIFORM = 0,  /* U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) */
  PARITY_INIT_XAVIER_NORMAL = 1,   /* N(0, std), std = gain * sqrt(2 / (fan_in + fan_out)) */
  PARITY_INIT_KAIMING_UNIFORM = 2, /* U(-a, a), a = gain * sqrt(3 / fan_in) */
  PARITY_INIT_KAIMING_NORMAL = 3   /* N(0, std), std = gain / sqrt(fan_in) */
} parity_init_t;

/* A new floating tensor of `shape` (rank >= 2: a linear weight [out, in], a conv weight
 * [out, in, kh, kw]) drawn as PyTorch's torch.nn.init does: receptive = the product of shape[2:],
 * fan_in = shape[1] * receptive, fan_out = shape[0] * receptive. gain: 1 for linear layers,
 * sqrt(2) for ReLU (Kaiming's usual choice), > 0. */
PARITY_API parity_status_t parity_init_weight(parity_device_t *dev, parity_dtype_t dtype, uint32_t rank,
                                              const int64_t *shape, parity_init_t kind, double gain,
                                              parity_generator_t *gen, parity_tensor_t **out);

#ifdef __cplusplus
}
#endif
#endif /* PARITY_NN_H */
