/* The Vulkan plugin's three matmul kernels (shaders/matmul.comp; PARITY_VULKAN_MATMUL): simple (one
 * output per invocation), blocked (4 x 4 outputs per invocation: lavapipe's default) and tiled
 * (16 x 16 shared-memory tiles: GPUs) sum every output in the same order, so forward and backward
 * give the same bits with each, in every float dtype: edges that are not multiples of 4 or 16, k
 * past several blocks of 16 with a partial last one, batches, and special values (infinities, NaN,
 * -0, products that overflow float32). A kernel that summed in another order fails here even
 * where conformance, which compares against float64 within a bound, would pass. */
#define _XOPEN_SOURCE 700 /* setenv */
#include <math.h>
#include <stdlib.h>

#include "vk_test.h"

typedef struct mm_case {
  int64_t batch, m, k, n;
} mm_case;

static const mm_case cases[] = {{1, 1, 1, 1},  {1, 5, 17, 7},  {1, 4, 16, 8}, {2, 9, 40, 13},
                                {3, 3, 33, 1}, {1, 1, 100, 6}, {1, 6, 3, 5},  {2, 17, 70, 18}};
enum { NCASES = sizeof cases / sizeof cases[0] };

/* deterministic values in [-2, 2], with specials at fixed places when `special` */
static double value(uint32_t i, uint32_t salt, int special, int32_t dt) {
  uint32_t h = (i + 1) * 2654435761u ^ (salt * 40503u + 7u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  double v = ((double)(h % 4001u) - 2000.0) / 1000.0;
  if (!special) return v;
  switch (i % 23) {
    case 3: return INFINITY;
    case 7: return -0.0;
    case 11: return dt == PARITY_DTYPE_F32 ? 3e19 : dt == PARITY_DTYPE_F64 ? 1e300 : 6e4; /* products overflow */
    case 19: return i % 2 ? NAN : -INFINITY;
    default: return v;
  }
}

static pt_tensor make(parity_device_t *dev, int32_t dt, const mm_case *c, int64_t rows, int64_t cols, uint32_t salt,
                      int special) {
  int64_t shape[3] = {c->batch, rows, cols};
  int64_t n = c->batch * rows * cols;
  double *v = malloc((size_t)n * sizeof *v);
  cr_assert_not_null(v);
  for (int64_t i = 0; i < n; i++) v[i] = value((uint32_t)i, salt, special, dt);
  pt_tensor t = pt_tensor_new(dev, dt, 3, shape, v);
  free(v);
  return t;
}

/* every output of every case and dtype the device has, with PARITY_VULKAN_MATMUL=mode, appended
 * to out[0..*n) */
static double *run_all(const char *mode, size_t *n) {
  setenv("PARITY_VULKAN_MATMUL", mode, 1);
  uint32_t p;
  parity_context_t *ctx = vt_context(&p);
  parity_device_t *dev = NULL;
  if (parity_context_open_device(ctx, p, 0, &dev) != PARITY_STATUS_OK) {
    parity_context_destroy(ctx);
    cr_skip_test("no Vulkan device opens here: %s", parity_last_error());
  }
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  size_t cap = 1 << 18, used = 0;
  double *out = malloc(cap * sizeof *out);
  cr_assert_not_null(out);
  static const int32_t dts[] = {PARITY_DTYPE_F32, PARITY_DTYPE_F64, PARITY_DTYPE_F16, PARITY_DTYPE_BF16};
  for (int d = 0; d < 4; d++) {
    int32_t dt = dts[d];
    if (!(info.dtype_mask & PARITY_DTYPE_BIT(dt))) continue;
    for (int ci = 0; ci < NCASES; ci++)
      for (int special = 0; special < 2; special++) {
        const mm_case *c = &cases[ci];
        pt_tensor a = make(dev, dt, c, c->m, c->k, 1, special), b = make(dev, dt, c, c->k, c->n, 2, special),
                  dc = make(dev, dt, c, c->m, c->n, 3, special), y = make(dev, dt, c, c->m, c->n, 0, 0),
                  da = make(dev, dt, c, c->m, c->k, 0, 0), db = make(dev, dt, c, c->k, c->n, 0, 0);
        const pt_tensor *in[] = {&a, &b, &dc}, *fwd_out[] = {&y}, *bwd_out[] = {&da, &db};
        cr_assert_eq(pt_run(dev, PARITY_OP_MATMUL, PARITY_DIRECTION_FORWARD, in, 2, fwd_out, 1, NULL), PARITY_STATUS_OK,
                     "%s: %s", mode, parity_last_error());
        cr_assert_eq(pt_run(dev, PARITY_OP_MATMUL, PARITY_DIRECTION_BACKWARD, in, 3, bwd_out, 2, NULL),
                     PARITY_STATUS_OK, "%s: %s", mode, parity_last_error());
        const pt_tensor *res[] = {&y, &da, &db};
        for (int r = 0; r < 3; r++) {
          size_t cnt = 1;
          for (uint32_t i = 0; i < res[r]->desc.rank; i++) cnt *= (size_t)res[r]->desc.shape[i];
          cr_assert_leq(used + cnt, cap);
          pt_tensor_read(res[r], out + used);
          used += cnt;
        }
        pt_tensor *all[] = {&a, &b, &dc, &y, &da, &db};
        for (int i = 0; i < 6; i++) pt_tensor_free(all[i]);
      }
  }
  parity_context_destroy(ctx);
  *n = used;
  return out;
}

static int same_bits(double x, double y) {
  if (isnan(x) && isnan(y)) return 1; /* which NaN is open (docs/semantics.md) */
  return memcmp(&x, &y, sizeof x) == 0;
}

Test(vk_matmul_kernels, simple_blocked_and_tiled_give_the_same_bits, .timeout = 600) {
  size_t n_simple, n_blocked, n_tiled;
  double *simple = run_all("simple", &n_simple);
  double *blocked = run_all("blocked", &n_blocked);
  double *tiled = run_all("tiled", &n_tiled);
  cr_assert_eq(n_blocked, n_simple);
  cr_assert_eq(n_tiled, n_simple);
  cr_assert_gt(n_simple, 1000u);
  int nonfinite = 0;
  for (size_t i = 0; i < n_simple; i++) {
    nonfinite += !isfinite(simple[i]);
    cr_assert(same_bits(blocked[i], simple[i]), "output %zu: blocked %a, simple %a", i, blocked[i], simple[i]);
    cr_assert(same_bits(tiled[i], simple[i]), "output %zu: tiled %a, simple %a", i, tiled[i], simple[i]);
  }
  cr_assert_gt(nonfinite, 0, "the special values reached no output");
  free(simple), free(blocked), free(tiled);
}

/* x w^T (a Linear layer's forward): the bits of the same product with w^T copied contiguous */
Test(vk_matmul_kernels, a_transposed_b_gives_the_bits_of_its_contiguous_copy, .timeout = 300) {
  pt_check_transposed_b_bits(vt_device());
}
