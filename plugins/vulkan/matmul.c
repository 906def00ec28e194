/* matmul.c — batched matmul forward and backward (shaders/matmul.comp). Backward reuses the
 * forward kernels on transposed views: da = dc b^T, db = a^T dc. CPU-like devices (lavapipe) run
 * a 4 x 4 block of outputs per invocation; GPUs run 16 x 16 shared-memory tiles, or one output per
 * invocation where a tile does not fit. All three sum in the same order (blocks of 16 in k order,
 * merged pairwise), so the result does not depend on the kernel or the launch geometry
 * (tests/vulkan/test_matmul_kernels.c compares their bits). */
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "parity_support/geom_matmul.h"
#include "vk_internal.h"

#define MM_TILE 16
#define MM_BLK 4 /* MB = NB in matmul.comp's K_MM_BLK */

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
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s %s: only floating dtypes", psup_op_name(d->op), psup_dtype_name(dt));
  if ((dt == PARITY_DTYPE_F16 || dt == PARITY_DTYPE_BF16) && !dev->slot->has_16bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                    "%s %s needs 16-bit storage (storageBuffer16BitAccess), "
                    "which %s lacks",
                    psup_op_name(d->op), psup_dtype_name(dt), dev->slot->kit.info.name);
  /* the longest sum: k (forward), or n and m (backward) */
  const parity_tensor_desc_t *a = d->inputs[0], *b = d->inputs[1];
  uint32_t r = a->rank;
  int64_t k = a->shape[r - 1];
  if (d->direction != PARITY_DIRECTION_FORWARD) {
    if (b->shape[r - 1] > k) k = b->shape[r - 1];
    if (a->shape[r - 2] > k) k = a->shape[r - 2];
  }
  if (dev->slot->cpu_like && vkp_reduce_cost(k) > VKP_LOOP_BUDGET)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                    "%s: sums of %lld terms exceed what one invocation of %s may "
                    "loop (llvmpipe stops shader loops after 65535 iterations)",
                    psup_op_name(d->op), (long long)k, dev->slot->kit.info.name);
  return vkp_check_window(dev, d);
}

/* C = A B per batch for product `which` of d (parity_support/geom_matmul.h), packed into the
 * shaders' 32-bit copy (windows are at most 2^31 bytes). */
static int32_t mm_launch(parity_plugin_device_t *dev, const parity_op_desc_t *d, int which) {
  psup_matmul_plan_t q;
  if (!psup_matmul_plan(&q, d, which)) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *const *t = q.t, *c = q.t[2];
  int64_t M = q.M, N = q.N, K = q.K, batch = q.count;
  vkp_mm_t p;
  memset(&p, 0, sizeof p);
  p.brank = q.batch.rank;
  for (int i = 0; i < PARITY_MAX_RANK; i++) {
    p.bshape[i] = (int32_t)q.batch.shape[i];
    for (int k = 0; k < 3; k++) p.bstride[k][i] = (int32_t)q.batch.strides[k][i];
  }
  p.M = (int32_t)M, p.N = (int32_t)N, p.K = (int32_t)K, p.batch = (int32_t)batch;
  p.am = (int32_t)q.am, p.ak = (int32_t)q.ak, p.bk = (int32_t)q.bk, p.bn = (int32_t)q.bn;
  p.cm = (int32_t)q.cm, p.cn = (int32_t)q.cn;

  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  /* PARITY_VULKAN_MATMUL forces a kernel (the GPU paths tested on lavapipe); a tile that does not
   * fit the device falls back to the simple kernel */
  int fits = dev->slot->max_local >= MM_TILE * MM_TILE &&
             dev->slot->shared_bytes >= 2u * MM_TILE * (MM_TILE + 1) * (c->dtype == PARITY_DTYPE_F64 ? 8u : 4u);
  int kind = vkp_knobs.matmul;
  if (kind == VKP_MM_AUTO) kind = dev->slot->cpu_like ? VKP_MM_BLOCKED : VKP_MM_TILED;
  if (kind == VKP_MM_TILED && !fits) kind = VKP_MM_SIMPLE;
  /* the blocked kernel loops once per term (llvmpipe's loop budget: one block's whole sum must fit
   * one invocation) and its binary counter holds 2^16 - 1 blocks of 16 terms */
  uint64_t blk_cost = (uint64_t)K + vkp_reduce_cost(K) + 8;
  if (kind == VKP_MM_BLOCKED && ((dev->slot->cpu_like && blk_cost > VKP_LOOP_BUDGET) || K >= (int64_t)1 << 20))
    kind = VKP_MM_SIMPLE;
  int tiled = kind == VKP_MM_TILED, blocked = kind == VKP_MM_BLOCKED;
  l.spv = vkp_spv_find_math(dev, tiled ? "mm_tile" : blocked ? "mm_blk" : "mm", psup_dtype_name(c->dtype), c->dtype);
  if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
  l.noperands = 3;
  for (int k = 0; k < 3; k++) l.operands[k] = (vkp_operand_t){t[k], k == 2};
  vkp_bases_t b;
  vkp_bind_bases(dev, &l, &b);
  for (int k = 0; k < 3; k++) p.base[k] = (int32_t)b.base[k];
  uint64_t items = 0;
  if (tiled) {
    l.local = MM_TILE * MM_TILE;
    uint64_t tiles =
        (uint64_t)batch * (uint64_t)((M + MM_TILE - 1) / MM_TILE) * (uint64_t)((N + MM_TILE - 1) / MM_TILE);
    p.n = (int32_t)tiles;
    items = tiles * l.local;   /* one work-group per tile (folded, looping past the cap) */
    if (dev->slot->cpu_like) { /* forced tiling: as many tiles per work-group as llvmpipe's loop limit
                                  allows (a tile costs ~K + K/8 iterations), under the group cap */
      l.params = &p;
      l.params_size = sizeof p;
      uint64_t per = VKP_LOOP_BUDGET / ((uint64_t)K + (uint64_t)K / 8u + 64u);
      if (per < 1) per = 1;
      uint64_t need = (tiles + per - 1) / per, g = tiles < dev->max_groups ? tiles : dev->max_groups;
      vkp_fold_groups(dev, g > need ? g : need, l.groups);
      return vkp_dispatch(dev, &l);
    }
  }
  uint64_t cost = vkp_reduce_cost(K) + 8;
  if (blocked) {
    l.local = dev->local;
    items = (uint64_t)batch * (uint64_t)((M + MM_BLK - 1) / MM_BLK) * (uint64_t)((N + MM_BLK - 1) / MM_BLK);
    p.n = (int32_t)items;
    cost = blk_cost;
  } else if (!tiled) {
    l.local = dev->local;
    items = (uint64_t)batch * (uint64_t)M * (uint64_t)N;
    p.n = (int32_t)items;
  }
  l.params = &p;
  l.params_size = sizeof p;
  vkp_groups_bounded(dev, items, l.local, cost, l.groups);
  return vkp_dispatch(dev, &l);
}

int32_t vkp_matmul_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  return mm_launch(dev, d, PSUP_MM_FORWARD);
}

int32_t vkp_matmul_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int32_t st = mm_launch(dev, d, PSUP_MM_GRAD_A);
  if (st == PARITY_STATUS_OK) st = mm_launch(dev, d, PSUP_MM_GRAD_B);
  return st;
}
