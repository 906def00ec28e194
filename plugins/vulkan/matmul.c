/* matmul.c — batched matmul forward and backward (shaders/matmul.comp). Backward reuses the
 * forward kernels on transposed views: da = dc b^T, db = a^T dc. CPU-like devices (lavapipe) run
 * one output per invocation; GPUs run 16 x 16 shared-memory tiles. Both sum in the same order
 * (blocks of 16 in k order, merged pairwise), so the result does not depend on the kernel or the
 * launch geometry. */
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "vk_internal.h"


#define MM_TILE 16

/* mirrors Params in shaders/matmul.comp (std430, all int) */
typedef struct vkp_mm_t {
  int32_t M, N, K, batch;
  int32_t am, ak, bk, bn;
  int32_t cm, cn, brank, n;
  int32_t base[4];
  int32_t bshape[PARITY_MAX_RANK];
  int32_t bstride[3][PARITY_MAX_RANK];
} vkp_mm_t;
_Static_assert(sizeof(vkp_mm_t) == 192, "vkp_mm_t must match Params in matmul.comp");
_Static_assert(PARITY_MAX_RANK == 8, "matmul.comp assumes MAX_RANK 8");

int32_t vkp_matmul_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int32_t dt = d->inputs[0]->dtype;
  if (!psup_dtype_is_float(dt))
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "vulkan: %s %s: only floating dtypes", psup_op_name(d->op),
                    psup_dtype_name(dt));
  if (dt == PARITY_DTYPE_F64 && !dev->slot->has_f64)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "vulkan: %s f64 needs shaderFloat64, which %s lacks",
                    psup_op_name(d->op), dev->slot->info.name);
  if ((dt == PARITY_DTYPE_F16 || dt == PARITY_DTYPE_BF16) && !dev->slot->has_16bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "vulkan: %s %s needs 16-bit storage (storageBuffer16BitAccess), "
                    "which %s lacks", psup_op_name(d->op), psup_dtype_name(dt), dev->slot->info.name);
  /* the longest sum: k (forward), or n and m (backward) */
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1];
  uint32_t r = a->rank;
  int64_t k = a->shape[r - 1];
  if (d->direction != PARITY_DIRECTION_FORWARD) {
    if (b->shape[r - 1] > k) k = b->shape[r - 1];
    if (a->shape[r - 2] > k) k = a->shape[r - 2];
  }
  if (dev->slot->cpu_like && vkp_reduce_cost(k) > VKP_LOOP_BUDGET)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "vulkan: %s: sums of %lld terms exceed what one invocation of %s may "
                    "loop (llvmpipe stops shader loops after 65535 iterations)", psup_op_name(d->op), (long long)k,
                    dev->slot->info.name);
  return vkp_check_window(dev, d);
}

/* C = A B per batch, with A's, B's and C's row/column strides given explicitly (transposed views).
 * t: the tensors holding A, B, C (batch strides and bases come from them). */
static int32_t mm_launch(parity_plugin_device_t *dev, const parity_tensor_desc_t *const *t, int64_t M, int64_t N,
                         int64_t K, const int64_t *rc) {
  const parity_tensor_desc_t *c = t[2];
  uint32_t r = c->rank;
  vkp_mm_t p;
  memset(&p, 0, sizeof p);
  int64_t batch = 1;
  for (uint32_t a = 0; a + 2 < r; a++) {
    int64_t n = c->shape[a];
    batch *= n;
    if (n == 1) continue;
    int o = p.brank, merge = o > 0;
    for (int k = 0; k < 3 && merge; k++) merge = p.bstride[k][o - 1] == t[k]->strides[a] * n;
    if (merge) {
      p.bshape[o - 1] *= (int32_t)n;
      for (int k = 0; k < 3; k++) p.bstride[k][o - 1] = (int32_t)t[k]->strides[a];
    } else {
      p.bshape[o] = (int32_t)n;
      for (int k = 0; k < 3; k++) p.bstride[k][o] = (int32_t)t[k]->strides[a];
      p.brank++;
    }
  }
  if (batch == 0 || M == 0 || N == 0) return PARITY_STATUS_OK;
  p.M = (int32_t)M, p.N = (int32_t)N, p.K = (int32_t)K, p.batch = (int32_t)batch;
  p.am = (int32_t)rc[0], p.ak = (int32_t)rc[1], p.bk = (int32_t)rc[2], p.bn = (int32_t)rc[3];
  p.cm = (int32_t)rc[4], p.cn = (int32_t)rc[5];

  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  /* PARITY_VULKAN_MATMUL_TILED=1 / 0 forces the tiled / simple kernel (to test the GPU path on lavapipe) */
  const char *force = psup_getenv("PARITY_VULKAN_MATMUL_TILED");
  int fits = dev->slot->max_local >= MM_TILE * MM_TILE &&
             dev->slot->shared_bytes >= 2u * MM_TILE * (MM_TILE + 1) * (c->dtype == PARITY_DTYPE_F64 ? 8u : 4u);
  int tiled = fits && (force && *force ? atoi(force) != 0 : !dev->slot->cpu_like);
  l.spv = vkp_spv_find(tiled ? "mm_tile" : "mm", psup_dtype_name(c->dtype));
  if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
  l.noperands = 3;
  for (int k = 0; k < 3; k++) l.operands[k] = (vkp_operand_t){t[k], k == 2};
  vkp_bases_t b;
  vkp_bind_bases(dev, &l, &b);
  for (int k = 0; k < 3; k++) p.base[k] = (int32_t)b.base[k];
  uint64_t items;
  if (tiled) {
    l.local = MM_TILE * MM_TILE;
    uint64_t tiles = (uint64_t)batch * (uint64_t)((M + MM_TILE - 1) / MM_TILE) * (uint64_t)((N + MM_TILE - 1) / MM_TILE);
    p.n = (int32_t)tiles;
    items = tiles * l.local; /* one work-group per tile (folded, looping past the cap) */
    if (dev->slot->cpu_like) { /* llvmpipe's loop limit (forced tiling): one tile per work-group */
      uint64_t need = tiles, x = need < dev->slot->max_groups[0] ? need : dev->slot->max_groups[0];
      l.params = &p;
      l.params_size = sizeof p;
      l.groups[0] = (uint32_t)x;
      l.groups[1] = (uint32_t)((need + x - 1) / x);
      l.groups[2] = 1;
      return vkp_dispatch(dev, &l);
    }
  } else {
    l.local = dev->local;
    items = (uint64_t)batch * (uint64_t)M * (uint64_t)N;
    p.n = (int32_t)items;
  }
  l.params = &p;
  l.params_size = sizeof p;
  vkp_groups_bounded(dev, items, l.local, vkp_reduce_cost(K) + 8, l.groups);
  return vkp_dispatch(dev, &l);
}

int32_t vkp_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *c = d->outputs[0];
  uint32_t r = a->rank;
  const parity_tensor_desc_t *t[3] = {a, b, c};
  int64_t rc[6] = {a->strides[r - 2], a->strides[r - 1], b->strides[r - 2], b->strides[r - 1],
                   c->strides[r - 2], c->strides[r - 1]};
  return mm_launch(dev, t, c->shape[r - 2], c->shape[r - 1], a->shape[r - 1], rc);
}

int32_t vkp_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1], *dc = d->inputs[2];
  const parity_tensor_desc_t *da = d->outputs[0], *db = d->num_outputs > 1 ? d->outputs[1] : NULL;
  uint32_t r = a->rank;
  int64_t m = a->shape[r - 2], k = a->shape[r - 1], n = b->shape[r - 1];
  int32_t st = PARITY_STATUS_OK;
  if (da) { /* da[m,k] = dc[m,n] b^T[n,k] */
    const parity_tensor_desc_t *t[3] = {dc, b, da};
    int64_t rc[6] = {dc->strides[r - 2], dc->strides[r - 1], b->strides[r - 1], b->strides[r - 2],
                     da->strides[r - 2], da->strides[r - 1]};
    st = mm_launch(dev, t, m, k, n, rc);
  }
  if (db && st == PARITY_STATUS_OK) { /* db[k,n] = a^T[k,m] dc[m,n] */
    const parity_tensor_desc_t *t[3] = {a, dc, db};
    int64_t rc[6] = {a->strides[r - 1], a->strides[r - 2], dc->strides[r - 2], dc->strides[r - 1],
                     db->strides[r - 2], db->strides[r - 1]};
    st = mm_launch(dev, t, k, n, m, rc);
  }
  return st;
}
