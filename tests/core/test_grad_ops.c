/* Gradient of every public op and layer against central finite differences (f64, CPU). */
#include "core_test.h"
#include "gradcheck.h"

static parity_device_t *dev;
static void setup(void) { dev = pt_device("cpu"); }

/* Inputs away from kinks and ties. */
static const double A[24] = {0.3, -1.2, 0.7,   2.1,  -0.4, 1.5, -2.2, 0.9,   1.1, -0.6,  0.25, -1.7,
                             0.8, 1.9,  -0.35, 0.55, -1.1, 1.3, 0.15, -0.75, 2.4, -0.05, 0.65, -1.45};
static const double P[24] = {0.3, 1.2, 0.7,  2.1,  0.4, 1.5, 2.2,  0.9,  1.1, 0.6,  0.25, 1.7,
                             0.8, 1.9, 0.35, 0.55, 1.1, 1.3, 0.15, 0.75, 2.4, 0.05, 0.65, 1.45};

#define IN(r, vals, ...) \
  { .rank = r, .shape = {__VA_ARGS__}, .values = vals, .differentiable = 1 }

static parity_status_t f_unary(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  int op = *(int *)ctx;
  if (op == PARITY_OP_LEAKY_RELU) return parity_leaky_relu(in[0], 0.1, out);
  return parity_unary((parity_op_t)op, in[0], out);
}

Test(grad_ops, every_unary_op, .init = setup) {
  for (int op = PARITY_OP_NEG; op <= PARITY_OP_COS; op++) {
    int positive = op == PARITY_OP_LOG || op == PARITY_OP_SQRT || op == PARITY_OP_RSQRT || op == PARITY_OP_RECIPROCAL;
    pt_input in = IN(2, positive ? P : A, 3, 4);
    pt_gradcheck(dev, psup_op_name(op), f_unary, &op, &in, 1, 1e-6);
  }
}

static parity_status_t f_binary(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  return parity_binary((parity_op_t) * (int *)ctx, in[0], in[1], out);
}

Test(grad_ops, every_binary_op_with_broadcasting, .init = setup) {
  for (int op = PARITY_OP_ADD; op <= PARITY_OP_MINIMUM; op++) {
    int positive = op == PARITY_OP_POW || op == PARITY_OP_DIV;
    pt_input in[2] = {IN(2, positive ? P : A, 3, 4), IN(2, positive ? P + 12 : A + 12, 1, 4)};
    pt_gradcheck(dev, psup_op_name(op), f_binary, &op, in, 2, 1e-6);
  }
}

static parity_status_t f_where(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  parity_tensor_t *zero = NULL, *mask = NULL;
  parity_status_t st = parity_scalar_like(in[0], 0.0, &zero);
  if (st == PARITY_STATUS_OK) st = parity_compare(PARITY_OP_GT, in[0], zero, &mask);
  if (st == PARITY_STATUS_OK) st = parity_where(mask, in[0], in[1], out);
  parity_tensor_release(zero);
  parity_tensor_release(mask);
  return st;
}

Test(grad_ops, where_and_cast, .init = setup) {
  pt_input in[2] = {IN(1, A, 6), IN(1, A + 6, 6)};
  pt_gradcheck(dev, "where", f_where, NULL, in, 2, 1e-6);
}

static parity_status_t f_reduce(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  int *c = ctx;
  return parity_reduce((parity_op_t)c[0], in[0], (uint32_t)c[1], c[2], out);
}

Test(grad_ops, every_reduction_over_axis_sets, .init = setup) {
  int ops[4] = {PARITY_OP_SUM, PARITY_OP_MEAN, PARITY_OP_MAX, PARITY_OP_MIN};
  unsigned masks[4] = {1, 2, 5, 0};
  for (int i = 0; i < 4; i++)
    for (int m = 0; m < 4; m++) {
      int ctx[3] = {ops[i], (int)masks[m], m % 2};
      pt_input in = IN(3, A, 2, 3, 4);
      pt_gradcheck(dev, psup_op_name(ops[i]), f_reduce, ctx, &in, 1, 1e-6);
    }
}

static parity_status_t f_matmul(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  return parity_matmul(in[0], in[1], out);
}

Test(grad_ops, matmul_with_batch_broadcast, .init = setup) {
  pt_input in[2] = {IN(3, A, 2, 2, 3), IN(2, A + 12, 3, 4)};
  pt_gradcheck(dev, "matmul", f_matmul, NULL, in, 2, 1e-6);
}

static parity_status_t f_conv(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  parity_conv2d_options_t *o = ctx;
  return parity_conv2d(in[0], in[1], n > 2 ? in[2] : NULL, o, out);
}

static parity_status_t f_convt(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  return parity_conv_transpose2d(in[0], in[1], n > 2 ? in[2] : NULL, ctx, out);
}

Test(grad_ops, conv2d_and_conv_transpose2d, .init = setup) {
  static double x[2 * 2 * 4 * 4], w[4 * 1 * 3 * 3], b[4] = {0.1, -0.2, 0.3, 0.4};
  for (int i = 0; i < 64; i++) x[i] = sin(0.37 * i + 0.1);
  for (int i = 0; i < 36; i++) w[i] = cos(0.53 * i + 0.2);
  parity_conv2d_options_t o = {.stride = {2, 1}, .padding = {1, 0, 1, 1}, .dilation = {1, 1}, .groups = 2};
  pt_input in[3] = {IN(4, x, 2, 2, 4, 4), IN(4, w, 4, 1, 3, 3), IN(1, b, 4)};
  pt_gradcheck(dev, "conv2d", f_conv, &o, in, 3, 1e-6);
  parity_conv2d_options_t ot = {.stride = {2, 2}, .padding = {1, 1, 0, 0}, .dilation = {1, 1}, .groups = 1};
  pt_input tin[3] = {IN(4, x, 1, 2, 3, 3), IN(4, w, 2, 2, 2, 2), IN(1, b, 2)};
  pt_gradcheck(dev, "conv_transpose2d", f_convt, &ot, tin, 3, 1e-6);
}

static parity_status_t f_pool(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  parity_pool2d_options_t *o = ctx;
  return parity_pool2d(
      o->count_include_pad >= 10 ? PARITY_OP_MAX_POOL2D : PARITY_OP_AVG_POOL2D, in[0],
      &(parity_pool2d_options_t){.kernel = {o->kernel[0], o->kernel[1]},
                                 .stride = {o->stride[0], o->stride[1]},
                                 .padding = {o->padding[0], o->padding[1], o->padding[2], o->padding[3]},
                                 .count_include_pad = o->count_include_pad % 10},
      out);
}

Test(grad_ops, max_and_avg_pool, .init = setup) {
  static double x[2 * 1 * 5 * 5];
  for (int i = 0; i < 50; i++) x[i] = sin(1.3 * i) * (1 + 0.01 * i); /* no ties */
  pt_input in = IN(4, x, 2, 1, 5, 5);
  parity_pool2d_options_t mx = {.kernel = {2, 3}, .stride = {1, 2}, .padding = {1, 0, 1, 1}, .count_include_pad = 10};
  pt_gradcheck(dev, "max_pool2d", f_pool, &mx, &in, 1, 1e-6);
  parity_pool2d_options_t av = {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1}, .count_include_pad = 0};
  pt_gradcheck(dev, "avg_pool2d", f_pool, &av, &in, 1, 1e-6);
  av.count_include_pad = 1;
  pt_gradcheck(dev, "avg_pool2d count_include_pad", f_pool, &av, &in, 1, 1e-6);
}

static parity_status_t f_softmax(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  int *c = ctx;
  return parity_softmax((parity_op_t)c[0], in[0], (uint32_t)c[1], out);
}

Test(grad_ops, softmax_and_log_softmax_on_each_axis, .init = setup) {
  for (int axis = 0; axis < 2; axis++) {
    int s[2] = {PARITY_OP_SOFTMAX, axis}, l[2] = {PARITY_OP_LOG_SOFTMAX, axis};
    pt_input in = IN(2, A, 4, 5);
    pt_gradcheck(dev, "softmax", f_softmax, s, &in, 1, 1e-6);
    pt_gradcheck(dev, "log_softmax", f_softmax, l, &in, 1, 1e-6);
  }
}

static parity_status_t f_views(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  parity_tensor_t *t[8] = {0};
  parity_status_t st = parity_permute(in[0], (int32_t[]){2, 0, 1}, &t[0]); /* [4,2,3] */
  if (st == PARITY_STATUS_OK) st = parity_slice(t[0], 0, 1, 4, 2, &t[1]);  /* [2,2,3] */
  if (st == PARITY_STATUS_OK) st = parity_unsqueeze(t[1], 1, &t[2]);       /* [2,1,2,3] */
  if (st == PARITY_STATUS_OK) st = parity_expand(t[2], 4, (int64_t[]){2, 3, 2, 3}, &t[3]);
  if (st == PARITY_STATUS_OK) st = parity_reshape(t[3], 2, (int64_t[]){6, -1}, &t[4]);
  if (st == PARITY_STATUS_OK) st = parity_contiguous(t[4], &t[5]);
  if (st == PARITY_STATUS_OK) st = parity_unary(PARITY_OP_TANH, t[5], out);
  for (int i = 0; i < 8; i++) parity_tensor_release(t[i]);
  return st;
}

Test(grad_ops, views_permute_slice_unsqueeze_expand_reshape, .init = setup) {
  pt_input in = IN(3, A, 2, 3, 4);
  pt_gradcheck(dev, "views", f_views, NULL, &in, 1, 1e-6);
}

static parity_status_t f_linear(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  return parity_linear(in[0], in[1], in[2], out);
}

static parity_status_t f_bilinear(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  return parity_bilinear(in[0], in[1], in[2], in[3], out);
}

static parity_status_t f_layer_norm(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  return parity_layer_norm(in[0], 1, in[1], in[2], 1e-5, out);
}

static parity_status_t f_batch_norm(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  return parity_batch_norm(in[0], in[1], in[2], NULL, NULL, 1, 0.1, 1e-5, out);
}

static parity_status_t f_mha(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  parity_mha_weights_t w = {.w_q = in[1], .w_k = in[2], .w_v = in[3], .w_o = in[4], .b_q = in[5], .num_heads = 2};
  return parity_multi_head_attention(in[0], in[0], in[0], &w, NULL, out);
}

static parity_status_t f_losses(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  parity_tensor_t *a = NULL, *b = NULL, *sm = NULL;
  parity_status_t st = parity_mse_loss(in[0], in[1], &a);
  if (st == PARITY_STATUS_OK) st = parity_softmax(PARITY_OP_SOFTMAX, in[1], 1, &sm);
  if (st == PARITY_STATUS_OK) st = parity_cross_entropy(in[0], sm, &b);
  if (st == PARITY_STATUS_OK) st = parity_binary(PARITY_OP_ADD, a, b, out);
  parity_tensor_release(a);
  parity_tensor_release(b);
  parity_tensor_release(sm);
  return st;
}

Test(grad_ops, layers_and_losses, .init = setup) {
  pt_input lin[3] = {IN(2, A, 3, 4), IN(2, A + 4, 2, 4), IN(1, A + 20, 2)};
  pt_gradcheck(dev, "linear", f_linear, NULL, lin, 3, 1e-6);
  pt_input bil[4] = {IN(2, A, 2, 3), IN(2, A + 6, 2, 2), IN(3, A + 10, 2, 3, 2), IN(1, A + 22, 2)};
  pt_gradcheck(dev, "bilinear", f_bilinear, NULL, bil, 4, 1e-6);
  pt_input ln[3] = {IN(2, A, 3, 4), IN(1, P, 4), IN(1, A + 8, 4)};
  pt_gradcheck(dev, "layer_norm", f_layer_norm, NULL, ln, 3, 1e-5);
  pt_input bn[3] = {IN(4, A, 2, 3, 2, 2), IN(1, P, 3), IN(1, A + 3, 3)};
  pt_gradcheck(dev, "batch_norm", f_batch_norm, NULL, bn, 3, 1e-5);
  pt_input mha[6] = {IN(3, A, 1, 3, 4),  IN(2, A + 2, 4, 4), IN(2, A + 5, 4, 4),
                     IN(2, A + 7, 4, 4), IN(2, P + 1, 4, 4), IN(1, A + 9, 4)};
  pt_gradcheck(dev, "multi_head_attention", f_mha, NULL, mha, 6, 1e-5);
  pt_input loss[2] = {IN(2, A, 3, 4), IN(2, A + 12, 3, 4)};
  pt_gradcheck(dev, "mse + cross_entropy", f_losses, NULL, loss, 2, 1e-6);
}
