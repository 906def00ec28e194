/* desc.h — shape, stride and descriptor helpers shared by core and every plugin. */
#ifndef PARITY_SUPPORT_DESC_H
#define PARITY_SUPPORT_DESC_H

#include <stdarg.h>
#include <stdint.h>

#include "parity_plugin.h"

/* Product of the shape (1 for rank 0). */
int64_t psup_numel(const parity_tensor_desc_t *t);
/* 1 when strides are row-major contiguous (size-1 axes may have any stride). */
int psup_is_contiguous(const parity_tensor_desc_t *t);
/* Fill a descriptor with row-major contiguous strides. */
void psup_tensor_init(parity_tensor_desc_t *t, int32_t dtype, uint32_t rank, const int64_t *shape,
                      parity_plugin_buffer_t *buffer, uint64_t offset_bytes);
/* Lowest and one-past-highest byte touched by the view (both 0 for an empty tensor). Returns 0
 * when the extent is representable, -1 when it underflows the offset or overflows int64. */
int psup_byte_extent(const parity_tensor_desc_t *t, int64_t *out_lo, int64_t *out_hi);
/* Element offset of the view's element 0 in its buffer: offset_bytes / element size (0 for a
 * NULL tensor). */
int64_t psup_elem_base(const parity_tensor_desc_t *t);

/* Check what every entry needs of a descriptor: struct sizes, op known, direction, operand
 * counts for the op kind, ranks <= PARITY_MAX_RANK, non-negative shapes, valid dtypes, and
 * (with need_buffers) non-NULL buffers for every present operand. On failure writes a message
 * into msg (at least 256 bytes) and returns PARITY_STATUS_INVALID_ARGUMENT. */
int32_t psup_check_op_desc(const parity_op_desc_t *d, int need_buffers, char *msg, size_t msg_size);
/* The same checks of the op (struct size, op, direction, operand counts and presence, one rank,
 * no zero output strides) without re-checking each operand's own invariants (valid dtype, shape
 * and strides within the addressable range): for descriptors built from tensors whose invariants
 * the builder keeps (libparity's own launches). */
int32_t psup_check_op_structure(const parity_op_desc_t *d, char *msg, size_t msg_size);

/* Multi-tensor strided iterator over a shared shape: walks every index in row-major order and
 * keeps one element offset per tensor. Usage:
 *   psup_iter_t it; psup_iter_init(&it, rank, shape, n, strides_arrays);
 *   for (int64_t i = 0; i < total; i++) { use it.off[k]; psup_iter_next(&it); }
 * Axes are not merged, so it is simple rather than fast; hot paths handle the innermost axis
 * themselves with psup_iter_next_outer(). */
#define PSUP_ITER_MAX 6
typedef struct psup_iter_t {
  uint32_t rank, count;
  int64_t shape[PARITY_MAX_RANK];
  int64_t idx[PARITY_MAX_RANK];
  int64_t strides[PSUP_ITER_MAX][PARITY_MAX_RANK];
  int64_t off[PSUP_ITER_MAX];
} psup_iter_t;

void psup_iter_init(psup_iter_t *it, uint32_t rank, const int64_t *shape, uint32_t count,
                    const int64_t *const *strides);
/* Position the iterator at row-major linear index `linear` (used to split work by ranges). */
void psup_iter_seek(psup_iter_t *it, int64_t linear);
static inline void psup_iter_next(psup_iter_t *it) {
  for (int32_t a = (int32_t)it->rank - 1; a >= 0; a--) {
    for (uint32_t k = 0; k < it->count; k++) it->off[k] += it->strides[k][a];
    if (++it->idx[a] < it->shape[a]) return;
    for (uint32_t k = 0; k < it->count; k++) it->off[k] -= it->strides[k][a] * it->shape[a];
    it->idx[a] = 0;
  }
}
/* Advance over every axis but the last (the caller walks the last axis itself). */
static inline void psup_iter_next_outer(psup_iter_t *it) {
  for (int32_t a = (int32_t)it->rank - 2; a >= 0; a--) {
    for (uint32_t k = 0; k < it->count; k++) it->off[k] += it->strides[k][a];
    if (++it->idx[a] < it->shape[a]) return;
    for (uint32_t k = 0; k < it->count; k++) it->off[k] -= it->strides[k][a] * it->shape[a];
    it->idx[a] = 0;
  }
}

/* Format a message and hand it to the host with its length (report_error_n, ABI 1.2; report_error
 * for an older host); returns status. Safe with host NULL. */
int32_t psup_report(const parity_host_api_t *host, int32_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for host->log / log_n (a diagnostic line at PARITY_LOG_* level). */
void psup_log(const parity_host_api_t *host, int32_t level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Describe a tensor as "f32[2,3] strides [3,1] +0" into buf. */
const char *psup_tensor_str(const parity_tensor_desc_t *t, char *buf, size_t size);

/* Check that every operand of `desc` lies inside its buffer; buffer_size(buf) gives each
 * buffer's size in bytes. Writes a message and returns INVALID_ARGUMENT when one reaches out. */
typedef uint64_t (*psup_buffer_size_fn)(const parity_plugin_buffer_t *buf);
int32_t psup_check_extents(const parity_op_desc_t *d, psup_buffer_size_fn buffer_size, char *msg, size_t msg_size);
/* What a kernel entry checks: only what is cheap. The host validated the whole descriptor
 * (psup_check_op_desc; operands inside live buffers) and asked supports() before calling the
 * entry (parity_plugin.h), so an entry checks that the descriptor is there, well-formed in its
 * counts, and that its op belongs to this entry's family and direction. */
int32_t psup_check_kernel_entry(const parity_op_desc_t *d, int32_t family, int32_t direction, char *msg,
                                size_t msg_size);
#endif
