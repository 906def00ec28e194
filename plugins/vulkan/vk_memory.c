/* vk_memory.c — buffers (a VkBuffer with its own device-local memory; tensors address them by
 * byte offset) and the transfers of the one in-order queue. Writes copy the caller's bytes into
 * the batch's staging ring and record a copy, so they are ordered with the kernels around them
 * without waiting; reads and synchronize submit and wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/buffer_args.h"
#include "vk_internal.h"

int32_t vkp_buffer_alloc(parity_plugin_device_t *dev, uint64_t size, parity_plugin_buffer_t **out) {
  int32_t st = psup_kit_check_alloc(&vkp_kit, &dev->slot->kit, size, "maxMemoryAllocationSize");
  if (st != PARITY_STATUS_OK) return st;
  parity_plugin_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
  /* Vulkan has no empty buffers, and fills work on whole words */
  b->alloc = size < 16 ? 16 : (size + 3) & ~(uint64_t)3;
  b->size = size;
  VkBufferCreateInfo bci = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = b->alloc,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  char what[64];
  snprintf(what, sizeof what, "%llu bytes", (unsigned long long)size);
  VkResult r = vkCreateBuffer(dev->dev, &bci, NULL, &b->buf);
  if (r != VK_SUCCESS) {
    vkp_buffer_free(dev, b);
    return vkp_vk_fail(r, "vkCreateBuffer", what);
  }
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev->dev, b->buf, &req);
  VkDeviceMemory mem;
  uint64_t at = 0;
  if (vkp_sub_fits(&req)) {
    st = vkp_sub_alloc(dev, &req, &b->sub, &b->sub_slot, &mem, &at);
  } else {
    st = vkp_memory_alloc(dev, &req, 0, "buffer_alloc", &b->mem, NULL);
    mem = b->mem;
  }
  if (st != PARITY_STATUS_OK) {
    vkp_buffer_free(dev, b);
    return st;
  }
  r = vkBindBufferMemory(dev->dev, b->buf, mem, at);
  if (r != VK_SUCCESS) {
    vkp_buffer_free(dev, b);
    return vkp_vk_fail(r, "vkBindBufferMemory", what);
  }
  *out = b;
  return PARITY_STATUS_OK;
}

void vkp_buffer_free(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  if (!b) return;
  /* queued work may still use it: let that finish first (the core's caching allocator makes
   * frees rare) */
  if (b->last_use > dev->completed) vkp_flush(dev, 1);
  if (b->buf) vkDestroyBuffer(dev->dev, b->buf, NULL);
  if (b->sub)
    vkp_sub_free(dev, b->sub, b->sub_slot);
  else
    vkp_memory_free(dev, b->mem);
  free(b);
}

/* Copy host bytes into b through the staging ring, chunk by chunk. */
static int32_t upload(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                      uint64_t size, uint32_t pattern_size) {
  const uint8_t *p = src;
  uint64_t done = 0;
  while (done < size) {
    uint64_t n = size - done;
    if (n > VKP_STAGING_BYTES) n = VKP_STAGING_BYTES - (VKP_STAGING_BYTES % (pattern_size ? pattern_size : 1));
    vkp_host_buf_t *h;
    uint64_t hoff;
    int32_t st = vkp_staging(dev, n, 16, &h, &hoff);
    if (st != PARITY_STATUS_OK) return st;
    if (pattern_size) /* a repeated pattern (fill): src is one pattern */
      psup_fill_repeat(h->map + hoff, p, pattern_size, n);
    else
      memcpy(h->map + hoff, p + done, n);
    st = vkp_hazard(dev, NULL, 0, &b->buf, 1);
    VkCommandBuffer cmd;
    if (st == PARITY_STATUS_OK) st = vkp_cmd(dev, &cmd);
    if (st != PARITY_STATUS_OK) return st;
    VkBufferCopy region = {.srcOffset = hoff, .dstOffset = off + done, .size = n};
    vkCmdCopyBuffer(cmd, h->buf, b->buf, 1, &region);
    vkp_mark_used(dev, b);
    done += n;
  }
  return PARITY_STATUS_OK;
}

int32_t vkp_buffer_write(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                         uint64_t size) {
  if (size == 0) return PARITY_STATUS_OK; /* arguments checked by the kit (gpu_kit.h) */
  return upload(dev, b, off, src, size, 0);
}

int32_t vkp_buffer_read(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst,
                        uint64_t size) {
  if (size == 0) return vkp_synchronize(dev);
  int32_t st;
  uint8_t *p = dst;
  for (uint64_t done = 0; done < size;) {
    uint64_t n = size - done < VKP_STAGING_BYTES ? size - done : VKP_STAGING_BYTES;
    vkp_host_buf_t *h;
    uint64_t hoff;
    st = vkp_staging(dev, n, 16, &h, &hoff);
    if (st == PARITY_STATUS_OK) st = vkp_hazard(dev, &b->buf, 1, &h->buf, 1);
    VkCommandBuffer cmd;
    if (st == PARITY_STATUS_OK) st = vkp_cmd(dev, &cmd);
    if (st != PARITY_STATUS_OK) return st;
    VkBufferCopy region = {.srcOffset = off + done, .dstOffset = hoff, .size = n};
    vkCmdCopyBuffer(cmd, b->buf, h->buf, 1, &region);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    vkp_mark_used(dev, b);
    st = vkp_flush(dev, 1);
    if (st != PARITY_STATUS_OK) return st;
    memcpy(p + done, h->map + hoff, n);
    done += n;
  }
  return PARITY_STATUS_OK;
}

int32_t vkp_buffer_copy(parity_plugin_device_t *dev, parity_plugin_buffer_t *src, uint64_t src_off,
                        parity_plugin_buffer_t *dst, uint64_t dst_off, uint64_t size) {
  if (size == 0) return PARITY_STATUS_OK;
  int32_t st;
  int overlap = src == dst && src_off < dst_off + size && dst_off < src_off + size;
  for (uint64_t done = 0; done < size;) {
    uint64_t n = size - done;
    VkCommandBuffer cmd;
    if (!overlap) {
      st = vkp_hazard(dev, &src->buf, 1, &dst->buf, 1);
      if (st == PARITY_STATUS_OK) st = vkp_cmd(dev, &cmd);
      if (st != PARITY_STATUS_OK) return st;
      VkBufferCopy region = {.srcOffset = src_off, .dstOffset = dst_off, .size = size};
      vkCmdCopyBuffer(cmd, src->buf, dst->buf, 1, &region);
      break;
    }
    /* overlapping ranges of one buffer: bounce through staging */
    if (n > VKP_STAGING_BYTES) n = VKP_STAGING_BYTES;
    uint64_t from = src_off < dst_off ? src_off + size - done - n : src_off + done; /* memmove order */
    uint64_t to = src_off < dst_off ? dst_off + size - done - n : dst_off + done;
    vkp_host_buf_t *h;
    uint64_t hoff;
    st = vkp_staging(dev, n, 16, &h, &hoff);
    if (st == PARITY_STATUS_OK) st = vkp_hazard(dev, &src->buf, 1, &h->buf, 1);
    if (st == PARITY_STATUS_OK) st = vkp_cmd(dev, &cmd);
    if (st != PARITY_STATUS_OK) return st;
    VkBufferCopy r1 = {.srcOffset = from, .dstOffset = hoff, .size = n};
    vkCmdCopyBuffer(cmd, src->buf, h->buf, 1, &r1);
    st = vkp_hazard(dev, &h->buf, 1, &dst->buf, 1);
    if (st != PARITY_STATUS_OK) return st;
    VkBufferCopy r2 = {.srcOffset = hoff, .dstOffset = to, .size = n};
    vkCmdCopyBuffer(cmd, h->buf, dst->buf, 1, &r2);
    done += n;
  }
  vkp_mark_used(dev, src);
  vkp_mark_used(dev, dst);
  return PARITY_STATUS_OK;
}

int32_t vkp_buffer_fill(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                        const void *pattern, uint32_t psize) {
  int32_t st;
  if (size == 0) return PARITY_STATUS_OK;
  if (psize <= 4 && off % 4 == 0 && size % 4 == 0) {
    uint8_t word[4];
    for (int i = 0; i < 4; i++) word[i] = ((const uint8_t *)pattern)[i % psize];
    uint32_t data;
    memcpy(&data, word, 4);
    st = vkp_hazard(dev, NULL, 0, &b->buf, 1);
    VkCommandBuffer cmd;
    if (st == PARITY_STATUS_OK) st = vkp_cmd(dev, &cmd);
    if (st != PARITY_STATUS_OK) return st;
    vkCmdFillBuffer(cmd, b->buf, off, size, data);
    vkp_mark_used(dev, b);
    return PARITY_STATUS_OK;
  }
  return upload(dev, b, off, pattern, size, psize);
}

int32_t vkp_synchronize(parity_plugin_device_t *dev) { return vkp_flush(dev, 1); }
