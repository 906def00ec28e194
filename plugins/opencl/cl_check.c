/* cl_check.c — the checks every family's supports() shares: dtypes the device can run, equal
 * dtypes and shapes, element-aligned offsets. Each failure reports a message naming the op and
 * the values that matter. */
#include <stdio.h>

#include "cl_internal.h"

const char *ocl_shape_str(const parity_tensor_desc_t *t, char *buf, size_t n) {
  size_t off = (size_t)snprintf(buf, n, "[");
  for (uint32_t i = 0; i < t->rank && off < n; i++)
    off += (size_t)snprintf(buf + off, n - off, i ? ",%lld" : "%lld", (long long)t->shape[i]);
  if (off < n) snprintf(buf + off, n - off, "]");
  return buf;
}

int32_t ocl_check_dtype(const parity_plugin_device_t *dev, const parity_op_desc_t *d, int32_t dtype,
                        int allow_int, int allow_bool) {
  const char *op = psup_op_name(d->op), *dn = psup_dtype_name(dtype);
  if (dtype == PARITY_DTYPE_F64 && !dev->slot->has_fp64)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: %s f64 needs cl_khr_fp64, which %s lacks", op,
                    dev->slot->info.name);
  int is_int = dtype == PARITY_DTYPE_I32 || dtype == PARITY_DTYPE_I64;
  if (is_int && (!allow_int || (psup_op_info(d->op)->flags & PARITY_OPF_FLOAT)))
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: %s %s has no %s kernel (floating dtypes only)", op,
                    psup_direction_name(d->direction), dn);
  if (dtype == PARITY_DTYPE_BOOL && !allow_bool)
    return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: %s %s has no bool kernel", op,
                    psup_direction_name(d->direction));
  return PARITY_STATUS_OK;
}

int32_t ocl_check_same_dtype(const parity_op_desc_t *d, int32_t dtype, int skip_input, int skip_output) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t || (int)i == (pass ? skip_output : skip_input)) continue;
      if (t->dtype != dtype)
        return ocl_fail(PARITY_STATUS_UNSUPPORTED, "opencl: %s %s: %s %u is %s, expected %s (no mixed dtypes)",
                        psup_op_name(d->op), psup_direction_name(d->direction), pass ? "output" : "input",
                        i, psup_dtype_name(t->dtype), psup_dtype_name(dtype));
    }
  }
  return PARITY_STATUS_OK;
}

int32_t ocl_check_shape(const parity_op_desc_t *d, const parity_tensor_desc_t *t, const char *role,
                        uint32_t slot, const parity_tensor_desc_t *ref, const char *ref_name) {
  int same = t->rank == ref->rank;
  for (uint32_t i = 0; same && i < t->rank; i++) same = t->shape[i] == ref->shape[i];
  if (same) return PARITY_STATUS_OK;
  char a[96], b[96];
  return ocl_fail(PARITY_STATUS_INVALID_ARGUMENT, "opencl: %s %s: %s %u has shape %s, %s has %s",
                  psup_op_name(d->op), psup_direction_name(d->direction), role, slot,
                  ocl_shape_str(t, a, sizeof a), ref_name, ocl_shape_str(ref, b, sizeof b));
}

int32_t ocl_check_alignment(const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (t && t->offset_bytes % psup_dtype_size(t->dtype))
        return ocl_fail(PARITY_STATUS_UNSUPPORTED,
                        "opencl: %s: %s %u starts at byte offset %llu, not a multiple of its %u-byte "
                        "element", psup_op_name(d->op), pass ? "output" : "input", i,
                        (unsigned long long)t->offset_bytes, psup_dtype_size(t->dtype));
    }
  }
  return PARITY_STATUS_OK;
}
