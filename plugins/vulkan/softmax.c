/* softmax.c — softmax and log_softmax over one axis, forward and backward
 * (shaders/softmax.comp): one work-group per row of the softmax axis (its invocations stride
 * through the row and meet in a fixed shared-memory tree); every other axis is a row index
 * (merged where the operands allow; the row geometry is parity_support/geom_softmax.h's). Long
 * launches are split over several dispatches so that no invocation loops more than ~32k times
 * per dispatch (lavapipe stops a shader after 65,535 loop iterations in total, silently). */
#include <string.h>

#include "parity_support/geom_softmax.h"
#include "vk_internal.h"

/* mirrors Params in shaders/softmax.comp */
typedef struct vkp_smx_t {
  int32_t M, R, orank, pad;
  int32_t oshape[PARITY_MAX_RANK];
  int32_t ostride[3][PARITY_MAX_RANK]; /* forward: x, y; backward: y, dy, dx */
  int32_t base[4];
  int32_t rstride[4]; /* along the softmax axis */
} vkp_smx_t;
_Static_assert(sizeof(vkp_smx_t) == 176, "vkp_smx_t must match Params in softmax.comp");

#define SMX_LMAX 256u          /* LMAX in softmax.comp */
#define SMX_LOOP_BUDGET 32768u /* loop iterations per invocation and dispatch */
#define SMX_ELEM_COST 6u       /* loop iterations per element and invocation (3 passes; measured ~4) */

/* the work-group size: a power of two, the device default for rows up to 8192 elements, else
 * up to SMX_LMAX (a row's elements are spread over the work-group) */
static uint32_t smx_local(const parity_plugin_device_t *dev, int64_t row) {
  uint32_t cap = row > 8192 ? SMX_LMAX : dev->local, l = 1;
  while (l * 2u <= cap && l * 2u <= SMX_LMAX && l * 2u <= dev->slot->max_local) l *= 2u;
  return l;
}

int32_t vkp_softmax_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *x = d->inputs[0];
  const vkp_slot_t *s = dev->slot;
  int64_t row = x->shape[d->params.softmax.axis];
  uint64_t per_inv = ((uint64_t)row + smx_local(dev, row) - 1) / smx_local(dev, row);
  if (per_inv * SMX_ELEM_COST + 64u > SMX_LOOP_BUDGET)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                    "%s: a row of %lld elements is longer than one work-group "
                    "handles in one dispatch here (at most %llu; lavapipe ends a shader after 65,535 loop iterations)",
                    psup_op_name(d->op), (long long)row,
                    (unsigned long long)((SMX_LOOP_BUDGET - 64u) / SMX_ELEM_COST * smx_local(dev, row)));
  if ((x->dtype == PARITY_DTYPE_F16 || x->dtype == PARITY_DTYPE_BF16) && !s->has_16bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED, "%s %s needs storageBuffer16BitAccess, which %s lacks",
                    psup_op_name(d->op), psup_dtype_name(x->dtype), s->kit.info.name);
  return PARITY_STATUS_OK;
}

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d, const char *kernel, uint32_t nops,
                   const parity_tensor_desc_t *const *t) {
  psup_softmax_plan_t p;
  if (!psup_softmax_plan(&p, d, nops, t)) return PARITY_STATUS_OK;
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  l.spv = vkp_spv_find_math(dev, kernel, psup_dtype_name(t[0]->dtype), t[0]->dtype);
  if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
  l.op = d->op;
  l.local = smx_local(dev, p.R);
  l.noperands = nops;
  for (uint32_t k = 0; k < nops; k++) l.operands[k] = (vkp_operand_t){t[k], k == nops - 1};
  vkp_bases_t b;
  vkp_bind_bases(dev, &l, &b);
  /* the shaders' copy of the plan (parity_support/geom_softmax.h; 32-bit, windows are at most
   * 2^31 bytes), with the operands' bases in their binding windows */
  vkp_smx_t s;
  memset(&s, 0, sizeof s);
  for (uint32_t k = 0; k < nops; k++) {
    s.base[k] = (int32_t)b.base[k];
    s.rstride[k] = (int32_t)p.rstride[k];
  }
  s.R = (int32_t)p.R;
  s.M = (int32_t)p.M;
  s.orank = p.rows.rank;
  for (int i = 0; i < PARITY_MAX_RANK; i++) {
    s.oshape[i] = (int32_t)p.rows.shape[i];
    for (int k = 0; k < 3; k++) s.ostride[k][i] = (int32_t)p.rows.strides[k][i];
  }
  l.params = &s;
  l.params_size = sizeof s;
  /* rows per dispatch: every work-group takes as many rows as the loop budget allows */
  uint64_t per_inv = ((uint64_t)s.R + l.local - 1) / l.local;
  uint64_t row_cost = per_inv * SMX_ELEM_COST + 64u;
  uint64_t rows_per_group = row_cost >= SMX_LOOP_BUDGET ? 1 : SMX_LOOP_BUDGET / row_cost;
  /* PARITY_VULKAN_SOFTMAX_ROWS=n: n rows per work-group (fewer where the loop budget says so), so
   * that rows follow one another in a work-group (its shared memory reused) on every device; by
   * default a launch of up to 256 rows takes one work-group per row on lavapipe */
  uint32_t forced = vkp_knobs.softmax_rows;
  if (forced && forced < rows_per_group) rows_per_group = forced;
  for (uint64_t row0 = 0; row0 < (uint64_t)s.M;) {
    uint64_t left = (uint64_t)s.M - row0, rows;
    if (forced) {
      uint64_t most = (uint64_t)dev->max_groups * rows_per_group;
      rows = left < most ? left : most;
      vkp_fold_groups(dev, (rows + rows_per_group - 1) / rows_per_group, l.groups);
    } else {
      uint32_t g[3];
      vkp_groups_for(dev, left * l.local, l.local, g);
      uint64_t per = (uint64_t)g[0] * g[1] * g[2] * rows_per_group;
      rows = left < per ? left : per;
      vkp_groups_for(dev, rows * l.local, l.local, l.groups);
    }
    int32_t pc[2] = {(int32_t)row0, (int32_t)rows};
    memcpy(l.push, pc, sizeof pc);
    l.push_size = sizeof pc;
    int32_t st = vkp_dispatch(dev, &l);
    if (st != PARITY_STATUS_OK) return st;
    row0 += rows;
  }
  return PARITY_STATUS_OK;
}

int32_t vkp_softmax_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *t[] = {d->inputs[0], d->outputs[0]};
  return run(dev, d, "smx_fwd", 2, t);
}

int32_t vkp_softmax_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (!d->outputs[0]) return PARITY_STATUS_OK;
  const parity_tensor_desc_t *t[] = {d->inputs[0], d->inputs[1], d->outputs[0]};
  return run(dev, d, "smx_bwd", 3, t);
}
