/* elementwise.c — unary, binary, compare, select and cast, forward and backward
 * (shaders/elementwise.comp; a dense same-dtype cast and add's dense backward are buffer copies). Operands of one op share one shape (broadcasting arrives as zero
 * strides); the layout (parity_support/layout.h) merges axes before launch. */
#include <stdio.h>
#include <string.h>

#include "vk_internal.h"

#define IN(i) (d->inputs[i])
#define OUT(i) (d->outputs[i])

int32_t vkp_elementwise_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  int kind = psup_op_info(d->op)->kind;
  if ((kind == PARITY_OP_KIND_COMPARE || kind == PARITY_OP_KIND_SELECT) && !dev->slot->has_8bit)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                    "%s needs bool storage (storageBuffer8BitAccess and shaderInt8), which %s lacks",
                    psup_op_name(d->op), dev->slot->kit.info.name);
  return PARITY_STATUS_OK;
}

/* The variant of kernel (a static string) for op on t0's dtype with suffix: found by name once per
 * device, op and dtype, then from the device's cache when suffix is a static string (not ew_cast's). */
static int variant(parity_plugin_device_t *dev, const char *kernel, const char *suffix, int32_t op, int32_t dtype) {
  int cacheable = strcmp(kernel, "ew_cast") != 0;
  uint32_t h = (uint32_t)(((uintptr_t)kernel >> 3) * 31u + ((uintptr_t)suffix >> 3) * 17u + (uint32_t)op * 7u +
                          (uint32_t)dtype) &
               (sizeof dev->spv_cache / sizeof dev->spv_cache[0] - 1);
  if (cacheable && dev->spv_cache[h].kernel == kernel && dev->spv_cache[h].suffix == suffix &&
      dev->spv_cache[h].op == op && dev->spv_cache[h].dtype == dtype)
    return dev->spv_cache[h].spv;
  int spv, kind = psup_op_info(op)->kind;
  if ((kind == PARITY_OP_KIND_UNARY || kind == PARITY_OP_KIND_BINARY) && psup_dtype_is_float(dtype)) {
    char per_op[48]; /* floating unary/binary kernels: one variant per op, "<dtype>_<op>" */
    snprintf(per_op, sizeof per_op, "%s_%s", suffix, psup_op_name(op));
    spv = vkp_spv_find_math(dev, kernel, per_op, dtype);
  } else {
    spv = vkp_spv_find(kernel, suffix);
  }
  if (cacheable && spv >= 0) {
    dev->spv_cache[h].kernel = kernel;
    dev->spv_cache[h].suffix = suffix;
    dev->spv_cache[h].op = op;
    dev->spv_cache[h].dtype = dtype;
    dev->spv_cache[h].spv = spv;
  }
  return spv;
}

/* Fill the launch: operands in kernel order, geometry from the layout of those tensors. */
static int32_t launch(parity_plugin_device_t *dev, const char *kernel, const char *suffix, int32_t op, int32_t extra,
                      uint32_t nops, const parity_tensor_desc_t *const *t, const int *written, double alpha) {
  vkp_launch_t l;
  memset(&l, 0, sizeof l);
  l.spv = variant(dev, kernel, suffix, op, t[0]->dtype);
  if (l.spv < 0) return PARITY_STATUS_UNSUPPORTED;
  l.op = op;
  l.extra = extra;
  l.local = dev->local;
  l.noperands = nops;
  for (uint32_t k = 0; k < nops; k++) l.operands[k] = (vkp_operand_t){t[k], written[k]};
  vkp_bases_t b;
  vkp_bind_bases(dev, &l, &b);
  psup_layout_t lay;
  const int64_t *strides[PSUP_LAYOUT_MAX_OPS] = {0};
  const parity_tensor_desc_t *ref = NULL;
  for (uint32_t k = 0; k < nops; k++)
    if (t[k]) {
      strides[k] = t[k]->strides;
      if (!ref) ref = t[k];
    }
  psup_layout_build(&lay, ref->rank, ref->shape, nops, strides, b.base, 0);
  vkp_iter_t it;
  memset(&it, 0, sizeof it);
  int64_t n = psup_numel(ref);
  it.rank = (int32_t)lay.rank;
  it.n = (int32_t)n;
  for (uint32_t a = 0; a < lay.rank; a++) {
    it.shape[a] = (int32_t)lay.shape[a];
    for (uint32_t k = 0; k < nops; k++) it.strides[k][a] = (int32_t)lay.strides[k][a];
  }
  for (uint32_t k = 0; k < nops; k++) it.base[k] = (int32_t)lay.base[k];
  l.params = &it;
  l.params_size = sizeof it;
  if (psup_dtype_is_float(ref->dtype) || !strcmp(kernel, "ew_cast")) {
    /* leaky_relu's slope: the double's 8 bytes, read as a double on the software double path and
     * as its two words by the float32 library (pf_mul_d) */
    memcpy(l.push, &alpha, sizeof alpha);
    l.push_size = sizeof alpha;
  }
  vkp_groups_for(dev, (uint64_t)n, l.local, l.groups);
  return vkp_dispatch(dev, &l);
}

static const char *esize_name(int32_t dtype) {
  switch (psup_dtype_size(dtype)) {
    case 1: return "1";
    case 2: return "2";
    case 4: return "4";
    default: return "8";
  }
}

int32_t vkp_elementwise_forward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  if (psup_numel(OUT(0)) == 0) return PARITY_STATUS_OK;
  int32_t op = d->op;
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: {
      const parity_tensor_desc_t *t[] = {IN(0), OUT(0)};
      const int w[] = {0, 1};
      return launch(dev, "ew_unary", psup_dtype_name(IN(0)->dtype), op, 0, 2, t, w, d->params.unary.alpha);
    }
    case PARITY_OP_KIND_BINARY:
    case PARITY_OP_KIND_COMPARE: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), OUT(0)};
      const int w[] = {0, 0, 1};
      const char *k = psup_op_info(d->op)->kind == PARITY_OP_KIND_BINARY ? "ew_binary" : "ew_compare";
      return launch(dev, k, psup_dtype_name(IN(0)->dtype), op, 0, 3, t, w, 0);
    }
    case PARITY_OP_KIND_SELECT: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), OUT(0)};
      const int w[] = {0, 0, 0, 1};
      return launch(dev, "ew_select", esize_name(OUT(0)->dtype), op, 0, 4, t, w, 0);
    }
    default: { /* cast; a dense same-dtype one is a vkCmdCopyBuffer (psup_cast_is_copy) */
      uint64_t so, dof, bytes;
      if (psup_cast_is_copy(IN(0), OUT(0), &so, &dof, &bytes))
        return vkp_buffer_copy(dev, IN(0)->buffer, so, OUT(0)->buffer, dof, bytes);
      const parity_tensor_desc_t *t[] = {IN(0), OUT(0)};
      const int w[] = {0, 1};
      char suffix[16];
      snprintf(suffix, sizeof suffix, "%s_%s", psup_dtype_name(IN(0)->dtype), psup_dtype_name(OUT(0)->dtype));
      return launch(dev, "ew_cast", suffix, op, 0, 2, t, w, 0);
    }
  }
}

int32_t vkp_elementwise_backward(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  const parity_tensor_desc_t *g = IN(d->num_inputs - 1); /* incoming gradient */
  int any_out = 0;
  for (uint32_t i = 0; i < d->num_outputs; i++) any_out |= OUT(i) != NULL;
  if (psup_numel(g) == 0 || !any_out) return PARITY_STATUS_OK;
  int32_t op = d->op;
  const char *dn = psup_dtype_name(g->dtype);
  switch (psup_op_info(d->op)->kind) {
    case PARITY_OP_KIND_UNARY: {
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), OUT(0)};
      const int w[] = {0, 0, 0, 1};
      return launch(dev, "ew_unary_bwd", dn, op, 0, 4, t, w, d->params.unary.alpha);
    }
    case PARITY_OP_KIND_BINARY: {
      uint64_t so, dof[2], bytes; /* add's da = db = dc, dense: vkCmdCopyBuffer (psup_add_grad_is_copy) */
      if (psup_add_grad_is_copy(d, &so, dof, &bytes)) {
        int32_t st = PARITY_STATUS_OK;
        for (uint32_t k = 0; k < 2 && k < d->num_outputs && st == PARITY_STATUS_OK; k++)
          if (OUT(k)) st = vkp_buffer_copy(dev, IN(3)->buffer, so, OUT(k)->buffer, dof[k], bytes);
        return st;
      }
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), IN(2), IN(3), OUT(0), OUT(1)};
      const int w[] = {0, 0, 0, 0, 1, 1};
      int extra = (OUT(0) ? 1 : 0) | (d->num_outputs > 1 && OUT(1) ? 2 : 0);
      return launch(dev, "ew_binary_bwd", dn, op, extra, 6, t, w, 0);
    }
    default: { /* where: in cond, dc; out da, db */
      const parity_tensor_desc_t *t[] = {IN(0), IN(1), OUT(0), d->num_outputs > 1 ? OUT(1) : NULL};
      const int w[] = {0, 0, 1, 1};
      int extra = (OUT(0) ? 1 : 0) | (d->num_outputs > 1 && OUT(1) ? 2 : 0);
      return launch(dev, "ew_select_bwd", esize_name(g->dtype), op, extra, 4, t, w, 0);
    }
  }
}
