/* shape.h — the one checked statement of shape arithmetic. Every creation function, view and
 * descriptor check goes through these, so a size is never negative, an element count never
 * overflows, and no tensor has more than PSUP_MAX_NUMEL elements.
 *
 * PSUP_MAX_NUMEL is 2^48 elements: with 8-byte elements every byte offset fits in int64 with
 * room for strides, and the product of the non-zero sizes is bounded as well (a [0, 2^62] shape
 * holds no element but is refused just the same, so a later reshape or expand cannot make a huge
 * tensor out of an empty one). */
#ifndef PARITY_SUPPORT_SHAPE_H
#define PARITY_SUPPORT_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "parity_plugin.h"

#define PSUP_MAX_NUMEL ((int64_t)1 << 48)

/* a * b into *out; 0 when it fits in int64, -1 on overflow. */
int psup_mul_i64(int64_t a, int64_t b, int64_t *out);
/* a + b into *out; 0 when it fits in int64, -1 on overflow. */
int psup_add_i64(int64_t a, int64_t b, int64_t *out);

/* Check a shape: rank <= PARITY_MAX_RANK, shape non-NULL when rank > 0, every size >= 0, and the
 * product of the non-zero sizes <= PSUP_MAX_NUMEL. On success stores the element count (0 when
 * any size is 0) and returns PARITY_STATUS_OK; otherwise writes "<what>: <reason>" into msg and
 * returns PARITY_STATUS_INVALID_ARGUMENT. */
int32_t psup_shape_check(const char *what, uint32_t rank, const int64_t *shape, int64_t *numel, char *msg,
                         size_t msg_size);
/* Row-major contiguous strides of a checked shape (size-0 axes count as 1). */
void psup_contiguous_strides(uint32_t rank, const int64_t *shape, int64_t *strides);
/* Number of elements of range(start, stop, step) for 0 <= start <= stop and step >= 1, without
 * overflow for any step. */
int64_t psup_range_count(int64_t start, int64_t stop, int64_t step);
/* The one axis rule: an axis of a rank-`rank` tensor is in [-rank, rank), negative ones counting
 * from the end (-1 = last). 0 with *out set, or -1 when out of range. For an axis that names a
 * position to insert at (unsqueeze), pass rank + 1. */
int psup_axis(int64_t axis, uint32_t rank, uint32_t *out);

#endif
