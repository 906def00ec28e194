/* cl_memory.c — buffers (a cl_mem each; tensors address them by byte offset, never through
 * sub-buffers) and the device's one in-order queue. Kernel entries, copy, fill and write enqueue
 * and return; read and synchronize wait. A write copies the caller's memory into a host staging
 * copy and queues a non-blocking write from it (the ABI lets the caller reuse its memory at once,
 * and the queue need not drain first); the copies are freed when the queue has drained. Writes
 * past OCL_STAGING_MAX, or while more than OCL_STAGING_LIMIT bytes wait, block instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_internal.h"
#include "parity_support/grow.h"
#include "parity_support/buffer_args.h"

int32_t ocl_buffer_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out) {
  int32_t st = psup_kit_check_alloc(&ocl_kit, &dev->slot->kit, size, "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
  if (st != PARITY_STATUS_OK) return st;
  parity_plugin_buffer_t *b = malloc(sizeof *b);
  if (!b) return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
  cl_int e;
  /* OpenCL has no empty buffers; a zero-byte buffer gets one byte nobody addresses */
  b->mem = clCreateBuffer(dev->ctx, CL_MEM_READ_WRITE, size ? (size_t)size : 1, NULL, &e);
  if (e != CL_SUCCESS) {
    free(b);
    char what[64];
    snprintf(what, sizeof what, "%llu bytes", (unsigned long long)size);
    return ocl_cl_fail(e, "clCreateBuffer", what);
  }
  b->size = size;
  *out = b;
  return PARITY_STATUS_OK;
}

void ocl_buffer_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  (void)dev;
  if (!b) return;
  ocl_mem_release(b->mem); /* deferred by OpenCL until queued work using it has finished */
  free(b);
}

#define OCL_STAGING_MAX (16ull << 20)   /* larger writes block */
#define OCL_STAGING_LIMIT (64ull << 20) /* more waiting than this: drain the queue first */

void ocl_queue_drained(parity_plugin_device_t *dev) {
  for (uint32_t i = 0; i < dev->staging_count; i++) free(dev->staging[i]);
  dev->staging_count = 0;
  dev->staging_bytes = 0;
  ocl_cache_flush(dev, 0);
}

/* A host copy of src that lives until the queue drains, or NULL (then the write blocks). */
static void *stage(parity_plugin_device_t *dev, const void *src, uint64_t size) {
  if (size > OCL_STAGING_MAX) return NULL;
  if (dev->staging_bytes + size > OCL_STAGING_LIMIT) {
    if (clFinish(dev->queue) != CL_SUCCESS) return NULL;
    ocl_queue_drained(dev);
  }
  if (!psup_grow(&dev->staging, &dev->staging_cap, dev->staging_count, sizeof *dev->staging, 16)) return NULL;
  void *copy = malloc((size_t)size);
  if (!copy) return NULL;
  memcpy(copy, src, (size_t)size);
  dev->staging[dev->staging_count++] = copy;
  dev->staging_bytes += size;
  return copy;
}

int32_t ocl_buffer_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                         uint64_t size) {
  if (size == 0) return PARITY_STATUS_OK; /* arguments checked by the kit (gpu_kit.h) */
  const void *copy = stage(dev, src, size);
  /* without a copy, block: the caller may reuse src at once */
  OCL_CHECK(clEnqueueWriteBuffer(dev->queue, b->mem, copy ? CL_FALSE : CL_TRUE, (size_t)off, (size_t)size,
                                 copy ? copy : src, 0, NULL, NULL),
            "clEnqueueWriteBuffer", "buffer_write");
  return PARITY_STATUS_OK;
}

int32_t ocl_buffer_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst,
                        uint64_t size) {
  if (size == 0) return ocl_synchronize(dev);
  OCL_CHECK(clEnqueueReadBuffer(dev->queue, b->mem, CL_TRUE, (size_t)off, (size_t)size, dst, 0, NULL, NULL),
            "clEnqueueReadBuffer", "buffer_read");
  ocl_queue_drained(dev); /* in order: everything queued before the read has run */
  return PARITY_STATUS_OK;
}

int32_t ocl_buffer_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_off,
                        parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size) {
  if (size == 0) return PARITY_STATUS_OK;
  int32_t st;
  if (src == dst && src_off < dst_off + size && dst_off < src_off + size) {
    /* OpenCL refuses overlapping copies (CL_MEM_COPY_OVERLAP): go through the scratch buffer */
    cl_mem tmp;
    st = ocl_scratch(dev, size, &tmp);
    if (st != PARITY_STATUS_OK) return st;
    OCL_CHECK(clEnqueueCopyBuffer(dev->queue, src->mem, tmp, (size_t)src_off, 0, (size_t)size, 0, NULL, NULL),
              "clEnqueueCopyBuffer", "buffer_copy (overlapping, to scratch)");
    OCL_CHECK(clEnqueueCopyBuffer(dev->queue, tmp, dst->mem, 0, (size_t)dst_off, (size_t)size, 0, NULL, NULL),
              "clEnqueueCopyBuffer", "buffer_copy (overlapping, from scratch)");
    return PARITY_STATUS_OK;
  }
  OCL_CHECK(clEnqueueCopyBuffer(dev->queue, src->mem, dst->mem, (size_t)src_off, (size_t)dst_off, (size_t)size, 0, NULL,
                                NULL),
            "clEnqueueCopyBuffer", "buffer_copy");
  return PARITY_STATUS_OK;
}

int32_t ocl_copy(parity_plugin_device_t *dev, cl_mem src, size_t src_off, cl_mem dst, size_t dst_off, size_t bytes,
                 const char *what) {
  if (dev->rec) return ocl_rec_copy(dev, src, src_off, dst, dst_off, bytes);
  OCL_CHECK(clEnqueueCopyBuffer(dev->queue, src, dst, src_off, dst_off, bytes, 0, NULL, NULL), "clEnqueueCopyBuffer",
            what);
  return PARITY_STATUS_OK;
}

int32_t ocl_buffer_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                        const void *pattern, uint32_t psize) {
  if (size == 0) return PARITY_STATUS_OK;
  if (dev->rec && off % psize == 0) return ocl_rec_fill(dev, b->mem, (size_t)off, (size_t)size, pattern, psize);
  if (off % psize == 0) {
    OCL_CHECK(clEnqueueFillBuffer(dev->queue, b->mem, pattern, psize, (size_t)off, (size_t)size, 0, NULL, NULL),
              "clEnqueueFillBuffer", "buffer_fill");
    return PARITY_STATUS_OK;
  }
  /* clEnqueueFillBuffer wants the offset aligned to the pattern: write a host copy instead */
  unsigned char *host = malloc((size_t)size);
  if (!host) return ocl_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_fill: out of host memory");
  psup_fill_repeat(host, pattern, psize, size);
  int32_t st = dev->rec ? ocl_rec_write(dev, b->mem, (size_t)off, host, (size_t)size)
                        : ocl_buffer_write(dev, b, off, host, size);
  free(host);
  return st;
}

int32_t ocl_synchronize(parity_plugin_device_t *dev) {
  OCL_CHECK(clFinish(dev->queue), "clFinish", "synchronize");
  ocl_queue_drained(dev);
  return PARITY_STATUS_OK;
}

/* ---- operands ---------------------------------------------------------------------------------- */
cl_mem ocl_mem_of(const parity_tensor_desc_t *t) { return t && t->buffer ? t->buffer->mem : NULL; }
