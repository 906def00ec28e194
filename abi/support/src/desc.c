/* desc.c — descriptor validation, extents, iteration and error formatting. */
#include "parity_support/desc.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "parity_support/dtype.h"
#include "parity_support/operands.h"
#include "parity_support/ops.h"
#include "parity_support/shape.h"

int64_t psup_numel(const parity_tensor_desc_t *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

int psup_is_contiguous(const parity_tensor_desc_t *t) {
  int64_t expect = 1;
  for (int32_t i = (int32_t)t->rank - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}

int64_t psup_elem_base(const parity_tensor_desc_t *t) {
  return t ? (int64_t)(t->offset_bytes / psup_dtype_size(t->dtype)) : 0;
}

void psup_tensor_init(parity_tensor_desc_t *t, int32_t dtype, uint32_t rank, const int64_t *shape,
                      parity_plugin_buffer_t *buffer, uint64_t offset_bytes) {
  memset(t, 0, sizeof *t);
  t->struct_size = sizeof *t;
  t->dtype = dtype;
  t->rank = rank;
  int64_t s = 1;
  for (int32_t i = (int32_t)rank - 1; i >= 0; i--) {
    t->shape[i] = shape[i];
    t->strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  t->buffer = buffer;
  t->offset_bytes = offset_bytes;
}

int psup_byte_extent(const parity_tensor_desc_t *t, int64_t *out_lo, int64_t *out_hi) {
  *out_lo = *out_hi = 0;
  int64_t esz = psup_dtype_size(t->dtype);
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->shape[i] == 0) return 0;
  __int128 lo = 0, hi = 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    __int128 span = (__int128)(t->shape[i] - 1) * t->strides[i];
    if (span < 0)
      lo += span;
    else
      hi += span;
  }
  lo = lo * esz + (__int128)t->offset_bytes;
  hi = (hi + 1) * esz + (__int128)t->offset_bytes;
  if (lo < 0 || hi > INT64_MAX) return -1;
  *out_lo = (int64_t)lo;
  *out_hi = (int64_t)hi;
  return 0;
}

/* The sizes of the ABI 1.0 structs: the fields this code reads. Checked against these, not against
 * sizeof, so a plugin built with a later minor's headers (appended fields) still accepts a 1.0
 * host's descriptors. */
#define PSUP_TENSOR_DESC_1_0 (offsetof(parity_tensor_desc_t, offset_bytes) + sizeof(uint64_t))
#define PSUP_OP_DESC_1_0 (offsetof(parity_op_desc_t, params) + sizeof(parity_op_params_t))

static int32_t check_tensor(const parity_tensor_desc_t *t, const char *role, uint32_t slot, int need_buffers, char *msg,
                            size_t n) {
  if (t->struct_size < PSUP_TENSOR_DESC_1_0) {
    snprintf(msg, n, "%s %u: tensor descriptor struct_size %u is smaller than ABI 1.0's %zu", role, slot,
             t->struct_size, (size_t)PSUP_TENSOR_DESC_1_0);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (psup_dtype_size(t->dtype) == 0) {
    snprintf(msg, n, "%s %u: invalid dtype %d", role, slot, t->dtype);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  char inner[200]; /* formatted only on failure: this runs for every operand of every op */
  int32_t st = psup_shape_check(role, t->rank, t->shape, NULL, inner, sizeof inner);
  if (st != PARITY_STATUS_OK) {
    snprintf(msg, n, "%s %u%s", role, slot, inner + strlen(role));
    return st;
  }
  if (need_buffers && !t->buffer && psup_numel(t) > 0) {
    snprintf(msg, n, "%s %u: buffer is NULL", role, slot);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  int64_t lo, hi;
  if (psup_byte_extent(t, &lo, &hi) != 0) {
    snprintf(msg, n, "%s %u: strides and offset reach outside the addressable range", role, slot);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  return PARITY_STATUS_OK;
}

static int32_t check_desc(const parity_op_desc_t *d, int need_buffers, int tensors, char *msg, size_t n);

int32_t psup_check_op_desc(const parity_op_desc_t *d, int need_buffers, char *msg, size_t n) {
  return check_desc(d, need_buffers, 1, msg, n);
}

int32_t psup_check_op_structure(const parity_op_desc_t *d, char *msg, size_t n) { return check_desc(d, 0, 0, msg, n); }

static int32_t check_desc(const parity_op_desc_t *d, int need_buffers, int tensors, char *msg, size_t n) {
  if (!d) {
    snprintf(msg, n, "op descriptor is NULL");
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (d->struct_size < PSUP_OP_DESC_1_0) {
    snprintf(msg, n, "op descriptor struct_size %u is smaller than ABI 1.0's %zu", d->struct_size,
             (size_t)PSUP_OP_DESC_1_0);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  const psup_op_info_t *info = psup_op_info(d->op);
  if (!info) {
    snprintf(msg, n, "unknown op %d", d->op);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (d->direction != PARITY_DIRECTION_FORWARD && d->direction != PARITY_DIRECTION_BACKWARD) {
    snprintf(msg, n, "%s: invalid direction %d", info->name, d->direction);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  const psup_operands_t *ops = psup_operands(info->kind, d->direction);
  if (!ops || (d->direction == PARITY_DIRECTION_BACKWARD && !(info->flags & PARITY_OPF_BACKWARD))) {
    snprintf(msg, n, "%s has no %s", info->name, psup_direction_name(d->direction));
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (d->num_inputs != ops->num_inputs || d->num_outputs != ops->num_outputs) {
    snprintf(msg, n, "%s %s takes %u inputs and %u outputs, descriptor has %u and %u", info->name,
             psup_direction_name(d->direction), ops->num_inputs, ops->num_outputs, d->num_inputs, d->num_outputs);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  uint32_t rank = UINT32_MAX;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t count = pass ? ops->num_outputs : ops->num_inputs;
    for (uint32_t i = 0; i < count; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      const char *role = pass ? "output" : "input";
      const uint32_t flags = psup_operand(ops, pass, i)->flags;
      if (!t) {
        if (flags & PSUP_OPERAND_OPTIONAL) continue;
        snprintf(msg, n, "%s %s: %s %u is NULL", info->name, psup_direction_name(d->direction), role, i);
        return PARITY_STATUS_INVALID_ARGUMENT;
      }
      char inner[200];
      int32_t st = tensors ? check_tensor(t, role, i, need_buffers, inner, sizeof inner) : PARITY_STATUS_OK;
      if (st != PARITY_STATUS_OK) {
        snprintf(msg, n, "%s %s: %s", info->name, psup_direction_name(d->direction), inner);
        return st;
      }
      if (rank == UINT32_MAX) rank = t->rank;
      /* conv bias and dbias are rank 1; everything else shares the rank */
      if (!(flags & PSUP_OPERAND_RANK1) && t->rank != rank) {
        snprintf(msg, n, "%s %s: %s %u has rank %u, expected %u", info->name, psup_direction_name(d->direction), role,
                 i, t->rank, rank);
        return PARITY_STATUS_INVALID_ARGUMENT;
      }
      if (pass == 1)
        for (uint32_t a = 0; a < t->rank; a++)
          if (t->strides[a] == 0 && t->shape[a] > 1) {
            snprintf(msg, n, "%s %s: output %u has stride 0 on axis %u", info->name, psup_direction_name(d->direction),
                     i, a);
            return PARITY_STATUS_INVALID_ARGUMENT;
          }
    }
  }
  return PARITY_STATUS_OK;
}

void psup_iter_init(psup_iter_t *it, uint32_t rank, const int64_t *shape, uint32_t count,
                    const int64_t *const *strides) {
  /* only what this iterator uses: a full clear of the struct cost more than a small kernel */
  it->rank = rank;
  it->count = count;
  for (uint32_t k = 0; k < count; k++) it->off[k] = 0;
  for (uint32_t a = 0; a < rank; a++) it->shape[a] = shape[a], it->idx[a] = 0;
  for (uint32_t k = 0; k < count; k++)
    for (uint32_t a = 0; a < rank; a++) it->strides[k][a] = strides[k][a];
}

void psup_iter_seek(psup_iter_t *it, int64_t linear) {
  for (uint32_t k = 0; k < it->count; k++) it->off[k] = 0;
  for (int32_t a = (int32_t)it->rank - 1; a >= 0; a--) {
    int64_t s = it->shape[a] > 0 ? it->shape[a] : 1;
    it->idx[a] = linear % s;
    linear /= s;
    for (uint32_t k = 0; k < it->count; k++) it->off[k] += it->idx[a] * it->strides[k][a];
  }
}

/* fmt formatted into buf (size n); the length written, cut to n - 1 */
static size_t format_into(char *buf, size_t n, const char *fmt, va_list ap) {
  int len = vsnprintf(buf, n, fmt, ap);
  return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

int32_t psup_report(const parity_host_api_t *host, int32_t status, const char *fmt, ...) {
  if (!host || !host->report_error) return status;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  size_t n = format_into(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (PARITY_HAS_FIELD(host, parity_host_api_t, report_error_n) && host->report_error_n)
    host->report_error_n(host->host_data, status, buf, n);
  else
    host->report_error(host->host_data, status, buf);
  return status;
}

void psup_log(const parity_host_api_t *host, int32_t level, const char *fmt, ...) {
  if (!host || !host->log) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  size_t n = format_into(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (PARITY_HAS_FIELD(host, parity_host_api_t, log_n) && host->log_n)
    host->log_n(host->host_data, level, buf, n);
  else
    host->log(host->host_data, level, buf);
}

const char *psup_tensor_str(const parity_tensor_desc_t *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s[", psup_dtype_name(t->dtype));
  for (uint32_t i = 0; i < t->rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)t->shape[i]);
  if (n < size) n += (size_t)snprintf(buf + n, size - n, "] strides [");
  for (uint32_t i = 0; i < t->rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)t->strides[i]);
  if (n < size) snprintf(buf + n, size - n, "] +%llu", (unsigned long long)t->offset_bytes);
  return buf;
}

int32_t psup_check_extents(const parity_op_desc_t *d, psup_buffer_size_fn buffer_size, char *msg, size_t n) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t count = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < count; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t || psup_numel(t) == 0) continue;
      int64_t lo, hi;
      uint64_t size = buffer_size(t->buffer);
      if (psup_byte_extent(t, &lo, &hi) != 0 || (uint64_t)hi > size) {
        char desc[160];
        snprintf(msg, n, "%s %s: %s %u (%s) reaches byte %lld of a %llu-byte buffer", psup_op_name(d->op),
                 psup_direction_name(d->direction), pass ? "output" : "input", i, psup_tensor_str(t, desc, sizeof desc),
                 (long long)hi, (unsigned long long)size);
        return PARITY_STATUS_INVALID_ARGUMENT;
      }
    }
  }
  return PARITY_STATUS_OK;
}

int32_t psup_check_kernel_entry(const parity_op_desc_t *d, int32_t family, int32_t direction, char *msg, size_t n) {
  if (!d) {
    snprintf(msg, n, "descriptor is NULL");
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  const psup_op_info_t *info = psup_op_info(d->op);
  if (!info || d->num_inputs > PARITY_MAX_INPUTS || d->num_outputs > PARITY_MAX_OUTPUTS) {
    snprintf(msg, n, "malformed descriptor (op %d, %u inputs, %u outputs)", (int)d->op, d->num_inputs, d->num_outputs);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (psup_kind_family(info->kind) != family || d->direction != direction) {
    snprintf(msg, n, "%s %s sent to the %s %s entry", info->name, psup_direction_name(d->direction),
             psup_family_name(family), psup_direction_name(direction));
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  return PARITY_STATUS_OK;
}
