/* cu_memory.c — buffers (a CUdeviceptr each; tensors address them by byte offset) from the
 * device's stream-ordered pool (cuMemAllocAsync with the release threshold raised, so freed
 * memory is reused rather than returned at every synchronization), or cuMemAlloc where the device
 * has no pools; and the device's one in-order stream. Kernel entries, copy and fill enqueue and
 * return; write returns once the host memory has been copied; read and synchronize wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_internal.h"
#include "parity_support/buffer_args.h"

int32_t cu_mem_alloc(parity_plugin_device_t *dev, uint64_t size, CUdeviceptr *out, const char *what) {
  *out = 0;
  if (size == 0) return PARITY_STATUS_OK;
  CUresult r =
      dev->pools ? cu_drv.cuMemAllocAsync(out, (size_t)size, dev->stream) : cu_drv.cuMemAlloc(out, (size_t)size);
  if (r == CUDA_SUCCESS) return PARITY_STATUS_OK;
  *out = 0;
  char msg[400];
  snprintf(msg, sizeof msg, "%llu bytes for %s on %s", (unsigned long long)size, what, dev->slot->kit.info.name);
  return cu_res_fail(dev, r, dev->pools ? "cuMemAllocAsync" : "cuMemAlloc", msg);
}

void cu_mem_free(parity_plugin_device_t *dev, CUdeviceptr p) {
  if (!p) return;
  if (dev->pools) {
    cu_drv.cuMemFreeAsync(p, dev->stream); /* after the queued work that uses it */
  } else {
    cu_drv.cuStreamSynchronize(dev->stream);
    cu_drv.cuMemFree(p);
  }
}

int32_t cu_buffer_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out) {
  int32_t st = cu_enter(dev);
  if (st != PARITY_STATUS_OK) return st;
  st = psup_kit_check_alloc(&cu_kit, &dev->slot->kit, size, "the device's memory");
  if (st != PARITY_STATUS_OK) return st;
  parity_plugin_buffer_t *b = malloc(sizeof *b);
  if (!b) return cu_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
  st = cu_mem_alloc(dev, size, &b->ptr, "a buffer");
  if (st != PARITY_STATUS_OK) {
    free(b);
    return st;
  }
  b->size = size;
  *out = b;
  return PARITY_STATUS_OK;
}

void cu_buffer_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  if (!b) return;
  /* a poisoned context frees nothing (the calls would fail); the process must restart anyway */
  if (b->ptr && !cu_poisoned(&dev->slot->poison) && cu_drv.cuCtxSetCurrent(dev->ctx) == CUDA_SUCCESS)
    cu_mem_free(dev, b->ptr);
  free(b);
}

int32_t cu_synchronize(parity_plugin_device_t *dev) {
  int32_t st = cu_enter(dev);
  if (st != PARITY_STATUS_OK) return st;
  /* an event recorded after the last work: a blocking-sync wait instead of a spin */
  CU_CHECK(dev, cu_drv.cuEventRecord(dev->done, dev->stream), "cuEventRecord", "synchronize");
  CU_CHECK(dev, cu_drv.cuEventSynchronize(dev->done), "cuEventSynchronize", "synchronize");
  return PARITY_STATUS_OK;
}

int32_t cu_buffer_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                        uint64_t size) {
  if (size == 0) return PARITY_STATUS_OK; /* arguments checked, context entered by the kit */
  /* ordered after earlier work; waiting for it makes `src` reusable at once whether or not the
   * caller's memory is pinned */
  CU_CHECK(dev, cu_drv.cuMemcpyHtoDAsync(b->ptr + off, src, (size_t)size, dev->stream), "cuMemcpyHtoDAsync",
           "buffer_write");
  return cu_synchronize(dev);
}

int32_t cu_buffer_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst, uint64_t size) {
  if (size)
    CU_CHECK(dev, cu_drv.cuMemcpyDtoHAsync(dst, b->ptr + off, (size_t)size, dev->stream), "cuMemcpyDtoHAsync",
             "buffer_read");
  return cu_synchronize(dev);
}

int32_t cu_buffer_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_off,
                       parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size) {
  if (size == 0) return PARITY_STATUS_OK;
  int32_t st;
  if (src == dst && src_off < dst_off + size && dst_off < src_off + size) {
    /* overlapping copies are undefined for cuMemcpy: go through the scratch buffer */
    CUdeviceptr tmp;
    st = cu_scratch(dev, size, &tmp);
    if (st != PARITY_STATUS_OK) return st;
    CU_CHECK(dev, cu_drv.cuMemcpyDtoDAsync(tmp, src->ptr + src_off, (size_t)size, dev->stream), "cuMemcpyDtoDAsync",
             "buffer_copy (overlapping, to scratch)");
    CU_CHECK(dev, cu_drv.cuMemcpyDtoDAsync(dst->ptr + dst_off, tmp, (size_t)size, dev->stream), "cuMemcpyDtoDAsync",
             "buffer_copy (overlapping, from scratch)");
    return PARITY_STATUS_OK;
  }
  CU_CHECK(dev, cu_drv.cuMemcpyDtoDAsync(dst->ptr + dst_off, src->ptr + src_off, (size_t)size, dev->stream),
           "cuMemcpyDtoDAsync", "buffer_copy");
  return PARITY_STATUS_OK;
}

int32_t cu_buffer_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                       const void *pattern, uint32_t psize) {
  if (size == 0) return PARITY_STATUS_OK;
  CUdeviceptr p = b->ptr + off;
  size_t count = (size_t)(size / psize);
  if (p % psize == 0) {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32[2];
    switch (psize) {
      case 1:
        memcpy(&u8, pattern, 1);
        CU_CHECK(dev, cu_drv.cuMemsetD8Async(p, u8, count, dev->stream), "cuMemsetD8Async", "buffer_fill");
        return PARITY_STATUS_OK;
      case 2:
        memcpy(&u16, pattern, 2);
        CU_CHECK(dev, cu_drv.cuMemsetD16Async(p, u16, count, dev->stream), "cuMemsetD16Async", "buffer_fill");
        return PARITY_STATUS_OK;
      case 4:
        memcpy(u32, pattern, 4);
        CU_CHECK(dev, cu_drv.cuMemsetD32Async(p, u32[0], count, dev->stream), "cuMemsetD32Async", "buffer_fill");
        return PARITY_STATUS_OK;
      default:
        /* 8 bytes: each 32-bit half as a column of a 2-D memset with an 8-byte pitch */
        memcpy(u32, pattern, 8);
        CU_CHECK(dev, cu_drv.cuMemsetD2D32Async(p, 8, u32[0], 1, count, dev->stream), "cuMemsetD2D32Async",
                 "buffer_fill (low words)");
        CU_CHECK(dev, cu_drv.cuMemsetD2D32Async(p + 4, 8, u32[1], 1, count, dev->stream), "cuMemsetD2D32Async",
                 "buffer_fill (high words)");
        return PARITY_STATUS_OK;
    }
  }
  /* the memsets want the address aligned to the pattern: write a host copy instead (a host
   * transfer and a wait, which a graph capture cannot hold: a plan with such a fill is declined) */
  if (dev->rec)
    return cu_fail(PARITY_STATUS_UNSUPPORTED,
                   "plan_prepare: a fill at byte offset %llu with a %u-byte pattern is not aligned to it: "
                   "it takes a host copy, which a CUDA graph cannot record (the plan is replayed op by op)",
                   (unsigned long long)off, psize);
  unsigned char *host = malloc((size_t)size);
  if (!host) return cu_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_fill: out of host memory");
  psup_fill_repeat(host, pattern, psize, size);
  int32_t st = cu_buffer_write(dev, b, off, host, size);
  free(host);
  return st;
}
