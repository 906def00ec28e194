/* buffer_args.h — what every plugin's buffer entries require of their arguments: a byte range
 * inside the buffer, and a fill pattern of 1, 2, 4 or 8 bytes whose size divides the range; and
 * the repetition of a fill pattern over host memory. The messages carry no plugin prefix: the
 * plugin adds its own. */
#ifndef PARITY_SUPPORT_BUFFER_ARGS_H
#define PARITY_SUPPORT_BUFFER_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* OK when a buffer is present and [off, off + size) lies inside its buffer_size bytes; otherwise
 * writes "<what>: <reason>" into msg and returns PARITY_STATUS_INVALID_ARGUMENT (no buffer) or
 * PARITY_STATUS_OUT_OF_RANGE. */
int32_t psup_check_buffer_range(int present, uint64_t buffer_size, uint64_t off, uint64_t size, const char *what,
                                char *msg, size_t msg_size);
/* OK when pattern is non-NULL, psize is 1, 2, 4 or 8 and divides size; otherwise writes
 * "buffer_fill: bad pattern size <psize>" into msg and returns PARITY_STATUS_INVALID_ARGUMENT. */
int32_t psup_check_fill_pattern(const void *pattern, uint32_t psize, uint64_t size, char *msg, size_t msg_size);
/* Repeat the psize-byte pattern over size bytes at dst (size a multiple of psize). */
void psup_fill_repeat(unsigned char *dst, const void *pattern, uint32_t psize, uint64_t size);

#endif
