/* The shape of the API: option structs (struct_size, _init, zero = default, read only within
 * struct_size), conv_transpose2d output_padding, layer_norm over the last k axes, attention with
 * an additive mask, a causal flag and a scale. */
#include <stddef.h>
#include <string.h>

#include "core_test.h"
#include "gradcheck.h"

static parity_device_t *dev;
static void setup(void) { dev = pt_device("cpu"); }

static parity_tensor_t *filled(uint32_t rank, const int64_t *shape, double phase) {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= shape[i];
  double v[512];
  cr_assert_leq(n, 512);
  for (int64_t i = 0; i < n; i++) v[i] = sin(0.37 * (double)i + phase);
  return mat(dev, PARITY_DTYPE_F64, rank, shape, v);
}

static void bitwise_equal(parity_tensor_t *a, parity_tensor_t *b, const char *what) {
  cr_assert_eq(parity_tensor_rank(a), parity_tensor_rank(b), "%s: ranks", what);
  for (uint32_t i = 0; i < parity_tensor_rank(a); i++)
    cr_assert_eq(parity_tensor_shape(a)[i], parity_tensor_shape(b)[i], "%s: axis %u", what, i);
  int64_t n = parity_tensor_numel(a);
  double va[512], vb[512];
  cr_assert_leq(n, 512);
  OK(parity_tensor_to_f64(a, va, (uint64_t)n));
  OK(parity_tensor_to_f64(b, vb, (uint64_t)n));
  cr_assert_eq(memcmp(va, vb, (size_t)n * sizeof *va), 0, "%s: values differ", what);
}

static double dot(parity_tensor_t *a, parity_tensor_t *b) {
  int64_t n = parity_tensor_numel(a);
  double va[512], vb[512], s = 0;
  cr_assert_eq(n, parity_tensor_numel(b));
  OK(parity_tensor_to_f64(a, va, (uint64_t)n));
  OK(parity_tensor_to_f64(b, vb, (uint64_t)n));
  for (int64_t i = 0; i < n; i++) s += va[i] * vb[i];
  return s;
}

Test(api_shape, zero_option_fields_mean_their_defaults, .init = setup) {
  parity_tensor_t *x = filled(4, (int64_t[]){1, 2, 5, 5}, 0.1), *w = filled(4, (int64_t[]){3, 2, 3, 3}, 0.7);
  parity_conv2d_options_t zero = {0}, init, only_pad = {.padding = {1, 1, 1, 1}};
  parity_conv2d_options_init(&init);
  cr_assert_eq(init.struct_size, sizeof init);
  cr_assert(init.stride[0] == 1 && init.dilation[1] == 1 && init.groups == 1);
  parity_tensor_t *a, *b, *c, *d;
  OK(parity_conv2d(x, w, NULL, &zero, &a));
  OK(parity_conv2d(x, w, NULL, &init, &b));
  OK(parity_conv2d(x, w, NULL, NULL, &c));
  bitwise_equal(a, b, "{0} vs _init");
  bitwise_equal(a, c, "{0} vs NULL");
  OK(parity_conv2d(x, w, NULL, &only_pad, &d)); /* stride, dilation, groups defaulted */
  cr_assert_eq(parity_tensor_dim(d, -1), 5);
  parity_pool2d_options_t pz = {.kernel = {2, 2}}, pi;
  parity_pool2d_options_init(&pi);
  cr_assert_eq(pi.struct_size, sizeof pi);
  pi.kernel[0] = pi.kernel[1] = 2;
  parity_tensor_t *p1, *p2;
  OK(parity_pool2d(PARITY_OP_MAX_POOL2D, x, &pz, &p1)); /* stride 0 = the kernel */
  OK(parity_pool2d(PARITY_OP_MAX_POOL2D, x, &pi, &p2));
  bitwise_equal(p1, p2, "pool {kernel} vs _init");
  cr_assert_eq(parity_tensor_dim(p1, -1), 2);
  parity_tensor_t *all[] = {x, w, a, b, c, d, p1, p2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

/* A caller built against a smaller struct (struct_size before output_padding) has whatever lies
 * after it ignored, not read. */
Test(api_shape, options_are_read_only_within_struct_size, .init = setup) {
  parity_tensor_t *x = filled(4, (int64_t[]){1, 2, 3, 3}, 0.2), *w = filled(4, (int64_t[]){2, 2, 3, 3}, 0.5);
  parity_conv2d_options_t old = {.struct_size = offsetof(parity_conv2d_options_t, output_padding),
                                 .stride = {2, 2},
                                 .output_padding = {1, 1}},
                          plain = {.stride = {2, 2}};
  parity_tensor_t *a, *b;
  OK(parity_conv_transpose2d(x, w, NULL, &old, &a));
  OK(parity_conv_transpose2d(x, w, NULL, &plain, &b));
  bitwise_equal(a, b, "output_padding outside struct_size");
  cr_assert_eq(parity_tensor_dim(a, 2), 7);
  parity_tensor_release(a);
  parity_tensor_release(b);
  parity_tensor_release(x);
  parity_tensor_release(w);
}

/* conv_transpose2d with output_padding is the adjoint of conv2d from the padded size:
 * <convT(x), y> = <x, conv2d(y)> for every y of the output's shape. */
Test(api_shape, conv_transpose2d_output_padding_is_the_adjoint_of_conv2d, .init = setup) {
  parity_tensor_t *x = filled(4, (int64_t[]){1, 2, 3, 4}, 0.3), *w = filled(4, (int64_t[]){2, 3, 3, 2}, 0.9);
  parity_conv2d_options_t o = {.stride = {2, 3}, .padding = {1, 0, 0, 1}, .output_padding = {1, 2}};
  parity_tensor_t *t, *y, *cy;
  OK(parity_conv_transpose2d(x, w, NULL, &o, &t));
  /* rows (3-1)*2 - 1 + 3 + 1 = 7, columns (4-1)*3 - 1 + 2 + 2 = 12 */
  cr_assert(parity_tensor_dim(t, 1) == 3 && parity_tensor_dim(t, 2) == 7 && parity_tensor_dim(t, 3) == 12);
  y = filled(4, parity_tensor_shape(t), 1.3);
  parity_conv2d_options_t c = o;
  c.output_padding[0] = c.output_padding[1] = 0;
  OK(parity_conv2d(y, w, NULL, &c, &cy));
  cr_assert(parity_tensor_dim(cy, 2) == 3 && parity_tensor_dim(cy, 3) == 4);
  double l = dot(t, y), r = dot(x, cy);
  cr_assert(fabs(l - r) <= 1e-12 * (1 + fabs(l)), "<convT x, y> %.17g vs <x, conv y> %.17g", l, r);
  parity_tensor_t *bad = NULL;
  parity_conv2d_options_t too_big = {.stride = {2, 2}, .output_padding = {2, 0}};
  cr_assert_eq(parity_conv_transpose2d(x, w, NULL, &too_big, &bad), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "below the stride"), "%s", parity_last_error());
  cr_assert_eq(parity_conv2d(x, w, NULL, &o, &bad), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "conv_transpose2d only"), "%s", parity_last_error());
  cr_assert_null(bad);
  parity_tensor_t *all[] = {x, w, t, y, cy};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

static parity_status_t f_convt_opad(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  return parity_conv_transpose2d(in[0], in[1], in[2], ctx, out);
}

static const double V[64] = {0.3,  -1.2,  0.7,  2.1,   -0.4,  1.5,   -2.2,  0.9,  1.1,   -0.6, 0.25,  1.7,  -0.8,
                             0.35, 1.9,   -1.4, 0.55,  0.65,  -1.05, 0.2,   1.3,  -0.15, 0.45, -1.6,  0.05, 0.95,
                             -0.3, 1.25,  -0.7, 0.8,   -1.9,  0.1,   1.6,   -0.5, 0.4,   -1.1, 0.75,  1.05, -0.25,
                             0.6,  -1.3,  0.15, 0.85,  -0.95, 1.45,  -0.35, 0.5,  -1.5,  1.15, -0.45, 0.9,  -0.05,
                             1.35, -0.85, 0.3,  -1.25, 0.7,   1.8,   -0.65, 0.2,  -1.75, 1.0,  0.4,   -0.2};
#define IN(r, vals, ...) \
  { .rank = r, .shape = {__VA_ARGS__}, .values = vals, .differentiable = 1 }

Test(api_shape, gradients_through_output_padding_layer_norm_axes_and_masked_attention, .init = setup) {
  parity_conv2d_options_t o = {.stride = {2, 2}, .padding = {1, 0, 0, 1}, .output_padding = {1, 0}};
  pt_input ct[3] = {IN(4, V, 1, 2, 2, 3), IN(4, V + 12, 2, 1, 3, 2), IN(1, V + 30, 1)};
  pt_gradcheck(dev, "conv_transpose2d output_padding", f_convt_opad, &o, ct, 3, 1e-6);
}

/* layer_norm over the last 2 axes equals normalising each [3, 4] block by hand. */
Test(api_shape, layer_norm_over_the_last_k_axes, .init = setup) {
  parity_tensor_t *x = filled(3, (int64_t[]){2, 3, 4}, 0.4), *g = filled(2, (int64_t[]){3, 4}, 1.1),
                  *b = filled(2, (int64_t[]){3, 4}, 2.3), *y;
  OK(parity_layer_norm(x, 2, g, b, 1e-5, &y));
  double xv[24], gv[12], bv[12], yv[24];
  OK(parity_tensor_to_f64(x, xv, 24));
  OK(parity_tensor_to_f64(g, gv, 12));
  OK(parity_tensor_to_f64(b, bv, 12));
  OK(parity_tensor_to_f64(y, yv, 24));
  for (int blk = 0; blk < 2; blk++) {
    double m = 0, var = 0;
    for (int i = 0; i < 12; i++) m += xv[blk * 12 + i] / 12;
    for (int i = 0; i < 12; i++) var += (xv[blk * 12 + i] - m) * (xv[blk * 12 + i] - m) / 12;
    for (int i = 0; i < 12; i++) {
      double want = (xv[blk * 12 + i] - m) / sqrt(var + 1e-5) * gv[i] + bv[i];
      cr_assert(fabs(yv[blk * 12 + i] - want) <= 1e-12, "element %d: %.17g vs %.17g", blk * 12 + i, yv[blk * 12 + i],
                want);
    }
  }
  parity_tensor_t *bad = NULL, *b4 = filled(1, (int64_t[]){4}, 0);
  cr_assert_eq(parity_layer_norm(x, 2, b, b4, 1e-5, &bad), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "last 2 axes"), "%s", parity_last_error());
  cr_assert_eq(parity_layer_norm(x, 4, NULL, NULL, 1e-5, &bad), PARITY_STATUS_INVALID_ARGUMENT);
  parity_tensor_t *y1, *y0;
  OK(parity_layer_norm(x, 1, NULL, NULL, 1e-5, &y1));
  OK(parity_layer_norm(x, 0, NULL, NULL, 1e-5, &y0)); /* 0 means 1 */
  bitwise_equal(y1, y0, "axes 0 vs 1");
  parity_tensor_t *all[] = {x, g, b, b4, y, y1, y0};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

typedef struct attn {
  parity_tensor_t *q, *kv;
  parity_mha_weights_t w;
} attn;

static attn attn_new(int64_t lq, int64_t lk) {
  attn a;
  memset(&a, 0, sizeof a);
  a.q = filled(3, (int64_t[]){2, lq, 4}, 0.1);
  a.kv = filled(3, (int64_t[]){2, lk, 4}, 0.6);
  a.w.w_q = filled(2, (int64_t[]){4, 4}, 1.0);
  a.w.w_k = filled(2, (int64_t[]){4, 4}, 2.0);
  a.w.w_v = filled(2, (int64_t[]){4, 4}, 3.0);
  a.w.w_o = filled(2, (int64_t[]){4, 4}, 4.0);
  a.w.num_heads = 2;
  return a;
}

static void attn_free(attn *a) {
  parity_tensor_t *all[] = {a->q, a->kv, a->w.w_q, a->w.w_k, a->w.w_v, a->w.w_o};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
}

Test(api_shape, attention_mask_causal_flag_and_scale, .init = setup) {
  attn a = attn_new(3, 3);
  parity_tensor_t *causal, *masked, *plain, *scaled, *m;
  parity_attention_options_t oc, om = {.mask = NULL}, os = {.scale = 1.0 / sqrt(2.0)};
  parity_attention_options_init(&oc);
  oc.causal = 1;
  OK(parity_multi_head_attention(a.q, a.kv, a.kv, &a.w, &oc, &causal));
  double tri[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) tri[i * 3 + j] = j <= i ? 0.0 : -INFINITY;
  m = mat(dev, PARITY_DTYPE_F64, 2, (int64_t[]){3, 3}, tri);
  om.mask = m;
  OK(parity_multi_head_attention(a.q, a.kv, a.kv, &a.w, &om, &masked));
  bitwise_equal(causal, masked, "causal flag vs the explicit [Lq, Lk] mask");
  OK(parity_multi_head_attention(a.q, a.kv, a.kv, &a.w, NULL, &plain));
  OK(parity_multi_head_attention(a.q, a.kv, a.kv, &a.w, &os, &scaled)); /* 1/sqrt(E/heads) explicitly */
  bitwise_equal(plain, scaled, "default scale vs 1/sqrt(2)");
  /* the first query attends only to the first key under the causal mask: the same as attention
   * over a one-key sequence */
  parity_tensor_t *q0, *k0, *r0, *c0;
  OK(parity_slice(a.q, 1, 0, 1, 1, &q0));
  OK(parity_slice(a.kv, 1, 0, 1, 1, &k0));
  OK(parity_multi_head_attention(q0, k0, k0, &a.w, NULL, &r0));
  OK(parity_slice(causal, 1, 0, 1, 1, &c0));
  double want[8], got[8];
  OK(parity_tensor_to_f64(r0, want, 8));
  OK(parity_tensor_to_f64(c0, got, 8));
  for (int i = 0; i < 8; i++) cr_assert(fabs(got[i] - want[i]) <= 1e-12, "%d: %.17g vs %.17g", i, got[i], want[i]);
  parity_tensor_t *bad = NULL, *wide = filled(2, (int64_t[]){3, 5}, 0);
  parity_attention_options_t ow = {.mask = wide};
  cr_assert_eq(parity_multi_head_attention(a.q, a.kv, a.kv, &a.w, &ow, &bad), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(parity_last_error(), "does not broadcast"), "%s", parity_last_error());
  cr_assert_null(bad);
  parity_tensor_t *all[] = {causal, masked, plain, scaled, m, q0, k0, r0, c0, wide};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) parity_tensor_release(all[i]);
  attn_free(&a);
}

static parity_status_t f_masked_mha(parity_tensor_t **in, uint32_t n, void *ctx, parity_tensor_t **out) {
  (void)n;
  (void)ctx;
  parity_mha_weights_t w = {.w_q = in[1], .w_k = in[2], .w_v = in[3], .w_o = in[4], .num_heads = 2};
  parity_attention_options_t o = {.mask = in[5], .causal = 1, .scale = 0.3};
  return parity_multi_head_attention(in[0], in[0], in[0], &w, &o, out);
}

Test(api_shape, gradients_of_masked_causal_attention, .init = setup) {
  pt_input in[6] = {IN(3, V, 1, 3, 4),  IN(2, V + 2, 4, 4),  IN(2, V + 5, 4, 4),
                    IN(2, V + 7, 4, 4), IN(2, V + 11, 4, 4), IN(4, V + 40, 1, 1, 1, 3)};
  pt_gradcheck(dev, "masked causal attention", f_masked_mha, NULL, in, 6, 1e-5);
}
