/* reduce.c — sum, mean, max, min, argmax, argmin over any set of axes, forward and backward
 * (shaders/reduce.comp; the OpenCL plugin's algorithm). Forward splits x's axes into kept ones
 * (M outputs) and reduced ones (K terms each; the plan is parity_support/geom_reduce.h's, this
 * file packs it and adds the Vulkan limits); one invocation reduces one output sequentially
 * (pairwise float sums), and large K with few outputs is cut into partials (scratch) that a
 * second pass combines in a fixed order. Backward: sum/mean broadcast dy back; max/min count
 * each output's ties first (scratch), then share dy evenly among them. */
#include <string.h>

#include "parity_support/geom_reduce.h"
#include "vk_internal.h"

#define RED_COUNT_TIES (-1)

/* mirrors Params in shaders/reduce.comp (K_PASS, K_FINAL) */
typedef struct vkp_red_t {
  int32_t M, K, chunk, parts;
  int32_t orank, krank, odt_i64, pad0;
  int32_t val_off, idx_off, cnt_off, pad1; /* words of the scratch */
  int32_t oshape[PARITY_MAX_RANK];
  int32_t ostride[3][PARITY_MAX_RANK]; /* x, y, reference on the kept axes */
  int32_t kshape[PARITY_MAX_RANK];
  int32_t kstride[PARITY_MAX_RANK]; /* x on the reduced axes */
  int32_t base[4];
} vkp_red_t;
_Static_assert(sizeof(vkp_red_t) == 256, "vkp_red_t must match Params in reduce.comp");

/* mirrors Push in shaders/reduce.comp */
typedef struct vkp_red_push_t {
  int32_t item0, count, divisor;
} vkp_red_push_t;

/* terms of one partial, so that a partial fits the budget (pairwise pushes add ~1/16) */
#define RED_MAX_CHUNK 16384

/* Record `items` items of the launch, split over dispatches so that each invocation runs at
 * most VKP_LOOP_BUDGET loop iterations (`cost`: iterations per item) per dispatch. */
static int32_t dispatch_items(parity_plugin_device_t *dev, vkp_launch_t *l, uint64_t items, uint64_t cost,
                              int32_t divisor) {
  uint32_t g[3];
  vkp_groups_for(dev, items, l->local, g);
  uint64_t inv = (uint64_t)g[0] * g[1] * g[2] * l->local;
  uint64_t per_inv = cost >= VKP_LOOP_BUDGET ? 1 : VKP_LOOP_BUDGET / (cost ? cost : 1);
  uint64_t per = inv * per_inv;
  for (uint64_t start = 0; start < items; start += per) {
    uint64_t n = items - start < per ? items - start : per;
    vkp_red_push_t pc = {(int32_t)start, (int32_t)n, divisor};
    memcpy(l->push, &pc, sizeof pc);
    l->push_size = sizeof pc;
    vkp_groups_for(dev, n, l->local, l->groups);
    int32_t st = vkp_dispatch(dev, l);
    if (st != PARITY_STATUS_OK) return st;
  }
  return PARITY_STATUS_OK;
}

/* operand slots of K_PASS / K_FINAL */
enum { OPD_X, OPD_Y, OPD_YI, OPD_REF, OPD_PART, OPD_COUNT };

static int is_extreme_op(int32_t op) {
  return op == PARITY_OP_MAX || op == PARITY_OP_MIN || op == PARITY_OP_ARGMAX || op == PARITY_OP_ARGMIN;
}

/* scratch words per partial value */
static uint32_t words_of(int32_t dtype) { return dtype == PARITY_DTYPE_F64 || dtype == PARITY_DTYPE_I64 ? 2 : 1; }

int32_t vkp_reduce_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0];
  const vkp_slot_t *s = dev->slot;
  const char *op = psup_op_name(d->op), *dn = psup_dtype_name(x->dtype);
  if (x->dtype == PARITY_DTYPE_BOOL && !s->has_8bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s bool needs storageBuffer8BitAccess, which %s lacks", op,
                    s->kit.info.name);
  if ((x->dtype == PARITY_DTYPE_F16 || x->dtype == PARITY_DTYPE_BF16) && !s->has_16bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s %s needs storageBuffer16BitAccess, which %s lacks", op, dn,
                    s->kit.info.name);
  if (x->dtype == PARITY_DTYPE_I64 && !s->has_i64)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s i64 needs shaderInt64, which %s lacks", op, s->kit.info.name);
  /* max/min backward keeps one 4-byte tie count per output in one scratch binding */
  if (d->direction == PARITY_DIRECTION_BACKWARD && (d->op == PARITY_OP_MAX || d->op == PARITY_OP_MIN)) {
    uint64_t m = (uint64_t)psup_numel(d->inputs[1]);
    if (m * 4u + 65536u > s->max_range)
      return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                      "%s backward: %llu outputs need %llu bytes of tie counts; one "
                      "binding may span at most %llu (maxStorageBufferRange of %s)",
                      op, (unsigned long long)m, (unsigned long long)(m * 4u), (unsigned long long)s->max_range,
                      s->kit.info.name);
  }
  /* the final pass adds one output's partials (RED_MAX_CHUNK terms each) in one invocation: on
   * llvmpipe, whose loop limit would cut it short, refuse what does not fit */
  if (s->cpu_like && d->direction == PARITY_DIRECTION_FORWARD && psup_numel(d->outputs[0]) > 0) {
    uint64_t k = (uint64_t)psup_numel(x) / (uint64_t)psup_numel(d->outputs[0]);
    uint64_t most = (uint64_t)RED_MAX_CHUNK * (VKP_LOOP_BUDGET - 64u) * 8u / 9u;
    if (k > most)
      return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                      "%s over %llu terms per output: %s runs at most %llu (its loop "
                      "limit of 65,535 iterations per invocation)",
                      op, (unsigned long long)k, s->kit.info.name, (unsigned long long)most);
  }
  return PARITY_STATUS_OK;
}

/* The shaders' copy of the plan (parity_support/geom_reduce.h; 32-bit, windows are at most 2^31
 * bytes), with the operands' bases in their binding windows. */
static void red_pack(vkp_red_t *r, const psup_reduce_plan_t *p, const int64_t base[3]) {
  memset(r, 0, sizeof *r);
  r->M = (int32_t)p->M, r->K = (int32_t)p->K, r->chunk = (int32_t)p->chunk, r->parts = (int32_t)p->parts;
  r->orank = p->kept.rank;
  r->krank = p->reduced.rank;
  for (int i = 0; i < PARITY_MAX_RANK; i++) {
    r->oshape[i] = (int32_t)p->kept.shape[i];
    r->kshape[i] = (int32_t)p->reduced.shape[i];
    r->kstride[i] = (int32_t)p->reduced.strides[0][i];
    for (int k = 0; k < 3; k++) r->ostride[k][i] = (int32_t)p->kept.strides[k][i];
  }
  for (int k = 0; k < 3; k++) r->base[k] = (int32_t)base[k];
}

/* How many partials each output is cut into (psup_reduce_partials: enough invocations to fill
 * the device when there are few outputs), then at most RED_MAX_CHUNK terms per partial so that
 * one fits the loop budget. Returns the scratch words they need: per partial a value of w words
 * and a one-word index. */
static uint64_t red_plan(const parity_plugin_device_t *dev, psup_reduce_plan_t *p, uint32_t local, uint32_t w) {
  psup_reduce_partials(p, (uint64_t)local * dev->max_groups, 4u * w);
  if (p->chunk > RED_MAX_CHUNK) {
    int64_t parts = (p->K + RED_MAX_CHUNK - 1) / RED_MAX_CHUNK;
    p->chunk = (p->K + parts - 1) / parts;
    p->parts = (p->K + p->chunk - 1) / p->chunk;
  }
  if (p->parts == 1) return 0;
  return (uint64_t)p->M * (uint64_t)p->parts * (w + 1u);
}

static parity_tensor_desc_t scratch_desc(parity_plugin_buffer_t *b, uint64_t words) {
  parity_tensor_desc_t t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  t.dtype = PARITY_DTYPE_I32;
  t.rank = 1;
  t.shape[0] = (int64_t)(words ? words : 1);
  t.strides[0] = 1;
  t.buffer = b;
  t.offset_bytes = 0;
  return t;
}

/* Reduce x into its outputs with op (RED_COUNT_TIES: tie counts against ref into the scratch
 * words [0, M)). y is the output of x's dtype, yi the i64 one (one of them, or neither).
 * *scratch_bytes (when not NULL): the scratch asked for, 0 if none; asking for it again returns the
 * same buffer (parity_support/gpu_kit.h: scratch memory). */
static int32_t red_run(parity_plugin_device_t *dev, int32_t op, const parity_tensor_desc_t *x, uint32_t mask,
                       const parity_tensor_desc_t *y, const parity_tensor_desc_t *yi, const parity_tensor_desc_t *ref,
                       int odt_i64, uint64_t *scratch_bytes) {
  const char *dn = psup_dtype_name(x->dtype);
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  l.spv = vkp_spv_find_math(dev, "red_pass", dn, x->dtype);
  int final_spv = vkp_spv_find_math(dev, "red_final", dn, x->dtype);
  if (l.spv < 0 || final_spv < 0) return PARITY_STATUS_UNSUPPORTED;
  l.op = op;
  l.local = dev->local;
  l.noperands = OPD_COUNT;
  l.operands[OPD_X] = (vkp_operand_t){x, 0};
  l.operands[OPD_Y] = (vkp_operand_t){y, 1};
  l.operands[OPD_YI] = (vkp_operand_t){yi, 1};
  l.operands[OPD_REF] = (vkp_operand_t){ref, 0};
  vkp_bases_t b;
  vkp_bind_bases(dev, &l, &b);
  const parity_tensor_desc_t *out = y ? y : yi;
  int64_t bases[3] = {b.base[OPD_X], y ? b.base[OPD_Y] : yi ? b.base[OPD_YI] : 0, b.base[OPD_REF]};
  psup_reduce_plan_t p;
  psup_reduce_layout(&p, x, mask, out, ref);
  if (p.M == 0) return PARITY_STATUS_OK;
  if (p.K == 0) { /* an empty extent: one run of K terms, as when nothing is reduced */
    p.reduced.shape[0] = 1;
    p.reduced.strides[0][0] = 0;
    p.reduced.rank = 1;
  }
  uint32_t w = words_of(x->dtype);
  uint64_t cnt_words = op == RED_COUNT_TIES ? (uint64_t)p.M : 0;
  uint64_t words = cnt_words + red_plan(dev, &p, l.local, w);
  if (scratch_bytes) *scratch_bytes = words * 4u;
  vkp_red_t r;
  red_pack(&r, &p, bases);
  r.odt_i64 = odt_i64;
  r.cnt_off = 0;
  r.val_off = (int32_t)cnt_words;
  r.idx_off = (int32_t)(cnt_words + (uint64_t)r.M * (uint64_t)r.parts * w);
  parity_plugin_buffer_t *scratch = NULL;
  parity_tensor_desc_t sd;
  if (words) {
    int32_t st = vkp_scratch(dev, words * 4u, &scratch);
    if (st != PARITY_STATUS_OK) return st;
    sd = scratch_desc(scratch, words);
    l.operands[OPD_PART] = (vkp_operand_t){&sd, 1};
  }
  l.params = &r;
  l.params_size = sizeof r;
  l.local = dev->local;
  uint64_t chunk = (uint64_t)(r.chunk > 0 ? r.chunk : 1);
  uint64_t pass_cost = chunk + chunk / 8u + (uint64_t)(r.orank + r.krank) * 2u + 8u;
  int32_t st = dispatch_items(dev, &l, (uint64_t)r.M * (uint64_t)r.parts, pass_cost, 0);
  if (st != PARITY_STATUS_OK || r.parts == 1) return st;
  /* combine the partials: reads the scratch, writes the output (or the counts) */
  l.spv = final_spv;
  l.operands[OPD_X] = (vkp_operand_t){NULL, 0};
  l.operands[OPD_REF] = (vkp_operand_t){NULL, 0};
  l.operands[OPD_PART] = (vkp_operand_t){&sd, op == RED_COUNT_TIES};
  uint64_t parts = (uint64_t)r.parts;
  return dispatch_items(dev, &l, (uint64_t)r.M, parts + parts / 8u + (uint64_t)r.orank * 2u + 8u, 0);
}

int32_t vkp_reduce_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->outputs[0];
  if (psup_numel(y) == 0) return PARITY_STATUS_OK;
  uint32_t mask = d->params.reduce.axes_mask;
  int arg = d->op == PARITY_OP_ARGMAX || d->op == PARITY_OP_ARGMIN;
  int i64_out = arg || (x->dtype == PARITY_DTYPE_BOOL && y->dtype == PARITY_DTYPE_I64); /* index, count */
  return red_run(dev, d->op, x, mask, i64_out ? NULL : y, i64_out ? y : NULL, NULL, i64_out && !arg, NULL);
}

/* an elementwise pass over x's shape with the given operands and stride lists */
static int32_t iter_launch(parity_plugin_device_t *dev, vkp_launch_t *l, const parity_tensor_desc_t *x,
                           const int64_t *const *strides, int32_t divisor) {
  vkp_bases_t b;
  vkp_bind_bases(dev, l, &b);
  psup_layout_t lay;
  psup_layout_build(&lay, x->rank, x->shape, l->noperands, strides, b.base, 0);
  vkp_iter_t it;
  memset(&it, 0, sizeof it);
  int64_t n = psup_numel(x);
  it.rank = (int32_t)lay.rank;
  it.n = (int32_t)n;
  for (uint32_t a = 0; a < lay.rank; a++) {
    it.shape[a] = (int32_t)lay.shape[a];
    for (uint32_t k = 0; k < l->noperands; k++) it.strides[k][a] = (int32_t)lay.strides[k][a];
  }
  for (uint32_t k = 0; k < l->noperands; k++) it.base[k] = (int32_t)lay.base[k];
  l->params = &it;
  l->params_size = sizeof it;
  l->local = dev->local;
  /* ITER_OFFSET loops over the axes for each operand; pm_div iterates twice */
  return dispatch_items(dev, l, (uint64_t)n, (uint64_t)(l->noperands * lay.rank) + 8u, divisor);
}

int32_t vkp_reduce_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0], *y = d->inputs[1], *dy = d->inputs[2], *dx = d->outputs[0];
  int64_t n = psup_numel(x);
  if (!dx || n == 0) return PARITY_STATUS_OK;
  uint32_t mask = d->params.reduce.axes_mask;
  const char *dn = psup_dtype_name(x->dtype);
  int64_t sy[PARITY_MAX_RANK], sdy[PARITY_MAX_RANK], scount[PARITY_MAX_RANK];
  psup_reduce_broadcast_strides(y, mask, sy);
  psup_reduce_broadcast_strides(dy, mask, sdy);
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  if (d->op == PARITY_OP_SUM || d->op == PARITY_OP_MEAN) {
    l.spv = vkp_spv_find_math(dev, "red_bwd_sum", dn, x->dtype);
    if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
    l.op = d->op;
    l.noperands = 2;
    l.operands[0] = (vkp_operand_t){dy, 0};
    l.operands[1] = (vkp_operand_t){dx, 1};
    int32_t divisor = d->op == PARITY_OP_MEAN ? (int32_t)psup_reduce_terms(x, mask) : 0;
    const int64_t *strides[2] = {sdy, dx->strides};
    return iter_launch(dev, &l, x, strides, divisor);
  }
  if (!is_extreme_op(d->op)) return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s has no gradient", psup_op_name(d->op));
  /* max/min: tie counts per output into the scratch (words [0, M), contiguous over the kept
   * axes), then each tie gets dy / count */
  l.spv = vkp_spv_find_math(dev, "red_bwd_ext", dn, x->dtype);
  if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
  uint64_t bytes = 0; /* what red_run took: its request again returns the same buffer */
  int32_t st = red_run(dev, RED_COUNT_TIES, x, mask, NULL, NULL, y, 0, &bytes);
  if (st != PARITY_STATUS_OK) return st;
  int64_t m = psup_numel(y);
  psup_reduce_kept_strides(x, mask, scount);
  parity_plugin_buffer_t *scratch;
  st = vkp_scratch(dev, bytes, &scratch); /* the same buffer red_run filled */
  if (st != PARITY_STATUS_OK) return st;
  parity_tensor_desc_t sd = scratch_desc(scratch, (uint64_t)m);
  l.op = d->op;
  l.noperands = 5;
  l.operands[0] = (vkp_operand_t){x, 0};
  l.operands[1] = (vkp_operand_t){y, 0};
  l.operands[2] = (vkp_operand_t){dy, 0};
  l.operands[3] = (vkp_operand_t){&sd, 0};
  l.operands[4] = (vkp_operand_t){dx, 1};
  const int64_t *strides[5] = {x->strides, sy, sdy, scount, dx->strides};
  return iter_launch(dev, &l, x, strides, 0);
}
