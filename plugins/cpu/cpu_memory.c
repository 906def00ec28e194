/* cpu_memory.c — CPU buffers and the queue. Work runs synchronously on the calling thread
 * (with OpenMP workers inside kernels), which is a valid in-order queue. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "parity_support/buffer_args.h"
#include "parity_support/hugepages.h"

int32_t cpu_buffer_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out) {
  (void)dev;
  parity_plugin_buffer_t *b = malloc(sizeof *b);
  uint64_t rounded = (size + 63u) & ~(uint64_t)63u;
  if (size > UINT64_MAX - 63u) rounded = 0;
  void *data = b && rounded > 0 ? aligned_alloc(64, rounded) : (b && size == 0 ? aligned_alloc(64, 64) : NULL);
  if (!b || !data) {
    free(b);
    return cpu_fail(PARITY_STATUS_OUT_OF_MEMORY, "cpu: cannot allocate %llu bytes", (unsigned long long)size);
  }
  psup_advise_hugepages(data, rounded); /* large tensors fault in 2 MiB at a time */
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
  char msg[256];
  int32_t st = psup_check_buffer_range(b != NULL, b ? b->size : 0, off, size, what, msg, sizeof msg);
  return st == PARITY_STATUS_OK ? st : cpu_fail(st, "cpu: %s", msg);
}

int32_t cpu_buffer_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                         uint64_t size) {
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

int32_t cpu_buffer_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                        const void *pattern, uint32_t psize) {
  (void)dev;
  int32_t st = range(b, off, size, "buffer_fill");
  if (st != PARITY_STATUS_OK) return st;
  char msg[64];
  st = psup_check_fill_pattern(pattern, psize, size, msg, sizeof msg);
  if (st != PARITY_STATUS_OK) return cpu_fail(st, "cpu: %s", msg);
  psup_fill_repeat(b->data + off, pattern, psize, size);
  return PARITY_STATUS_OK;
}

int32_t cpu_synchronize(parity_plugin_device_t *dev) {
  (void)dev;
  return PARITY_STATUS_OK;
}
