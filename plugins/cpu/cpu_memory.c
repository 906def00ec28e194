/* cpu_memory.c — CPU buffers and the queue. Work runs synchronously on the calling thread
 * (with OpenMP workers inside kernels), which is a valid in-order queue. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

int32_t cpu_buffer_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out) {
  (void)dev;
  parity_plugin_buffer_t *b = malloc(sizeof *b);
  uint64_t rounded = (size + 63u) & ~(uint64_t)63u;
  if (size > UINT64_MAX - 63u) rounded = 0;
  void *data = b && rounded > 0 ? aligned_alloc(64, rounded) : (b && size == 0 ? aligned_alloc(64, 64) : NULL);
  if (!b || !data) {
    free(b);
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: cannot allocate %llu bytes",
                    (unsigned long long)size);
  }
  b->size = size;
  b->data = data;
  *out = b;
  return PARITY_STATUS_OK;
}

void cpu_buffer_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  (void)dev;
  if (!b) return;
  free(b->data);
  free(b);
}

static int32_t range(const parity_plugin_buffer_t *b, uint64_t off, uint64_t size, const char *what) {
  if (!b) return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: %s: buffer is NULL", what);
  if (off > b->size || size > b->size - off)
    return cpu_fail(PARITY_STATUS_OUT_OF_RANGE, "cpu: %s: range [%llu, +%llu) outside a %llu-byte buffer",
                    what, (unsigned long long)off, (unsigned long long)size, (unsigned long long)b->size);
  return PARITY_STATUS_OK;
}

int32_t cpu_buffer_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                         const void *src, uint64_t size) {
  (void)dev;
  int32_t st = range(b, off, size, "buffer_write");
  if (st == PARITY_STATUS_OK && size) memcpy(b->data + off, src, size);
  return st;
}

int32_t cpu_buffer_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst,
                        uint64_t size) {
  (void)dev;
  int32_t st = range(b, off, size, "buffer_read");
  if (st == PARITY_STATUS_OK && size) memcpy(dst, b->data + off, size);
  return st;
}

int32_t cpu_buffer_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_off,
                        parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size) {
  (void)dev;
  int32_t st = range(src, src_off, size, "buffer_copy source");
  if (st == PARITY_STATUS_OK) st = range(dst, dst_off, size, "buffer_copy destination");
  if (st == PARITY_STATUS_OK && size) memmove(dst->data + dst_off, src->data + src_off, size);
  return st;
}

int32_t cpu_buffer_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off,
                        uint64_t size, const void *pattern, uint32_t psize) {
  (void)dev;
  int32_t st = range(b, off, size, "buffer_fill");
  if (st != PARITY_STATUS_OK) return st;
  if (!pattern || (psize != 1 && psize != 2 && psize != 4 && psize != 8) || size % psize)
    return cpu_fail(PARITY_STATUS_INVALID_ARGUMENT, "cpu: buffer_fill: bad pattern size %u", psize);
  if (psize == 1) {
    memset(b->data + off, *(const unsigned char *)pattern, size);
    return PARITY_STATUS_OK;
  }
  for (uint64_t i = 0; i < size; i += psize) memcpy(b->data + off + i, pattern, psize);
  return PARITY_STATUS_OK;
}

int32_t cpu_synchronize(parity_plugin_device_t *dev) {
  (void)dev;
  return PARITY_STATUS_OK;
}
