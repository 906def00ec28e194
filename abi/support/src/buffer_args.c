/* buffer_args.c — see buffer_args.h. */
#include "parity_support/buffer_args.h"

#include <stdio.h>
#include <string.h>

#include "parity_plugin.h"

int32_t psup_check_buffer_range(int present, uint64_t buffer_size, uint64_t off, uint64_t size, const char *what,
                                char *msg, size_t msg_size) {
  if (!present) {
    snprintf(msg, msg_size, "%s: buffer is NULL", what);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  if (off > buffer_size || size > buffer_size - off) {
    snprintf(msg, msg_size, "%s: range [%llu, +%llu) outside a %llu-byte buffer", what, (unsigned long long)off,
             (unsigned long long)size, (unsigned long long)buffer_size);
    return PARITY_STATUS_OUT_OF_RANGE;
  }
  return PARITY_STATUS_OK;
}

int32_t psup_check_fill_pattern(const void *pattern, uint32_t psize, uint64_t size, char *msg, size_t msg_size) {
  if (!pattern || (psize != 1 && psize != 2 && psize != 4 && psize != 8) || size % psize) {
    snprintf(msg, msg_size, "buffer_fill: bad pattern size %u", psize);
    return PARITY_STATUS_INVALID_ARGUMENT;
  }
  return PARITY_STATUS_OK;
}

void psup_fill_repeat(unsigned char *dst, const void *pattern, uint32_t psize, uint64_t size) {
  if (psize == 1) {
    memset(dst, *(const unsigned char *)pattern, (size_t)size);
    return;
  }
  for (uint64_t i = 0; i < size; i += psize) memcpy(dst + i, pattern, psize);
}
