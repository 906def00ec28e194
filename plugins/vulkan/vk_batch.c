/* vk_batch.c — command batches. Work is recorded into the current batch's command buffer and
 * submitted when a read or synchronize needs it, or when the batch fills (dispatches, parameter
 * or staging ring). VKP_SLOTS batches rotate; a slot is reused once the timeline semaphore says
 * its previous submission finished, so a steady-state step allocates nothing new. Each batch
 * starts with a full barrier (ordering it after earlier submissions); inside a batch a barrier is
 * recorded only before a command that touches a buffer an earlier command of the batch wrote, or
 * writes one it read. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

int32_t vkp_host_buf_create(parity_plugin_device_t *dev, uint64_t size, VkBufferUsageFlags usage, vkp_host_buf_t *out) {
  memset(out, 0, sizeof *out);
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = usage,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VKP_CHECK(vkCreateBuffer(dev->dev, &bci, NULL, &out->buf), "vkCreateBuffer", "host-visible ring");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev->dev, out->buf, &req);
  int32_t st = vkp_memory_alloc(dev, &req, 1, "a host-visible ring", &out->mem, NULL);
  if (st != PARITY_STATUS_OK) {
    vkp_host_buf_destroy(dev, out);
    return st;
  }
  VkResult r = vkBindBufferMemory(dev->dev, out->buf, out->mem, 0);
  if (r == VK_SUCCESS) r = vkMapMemory(dev->dev, out->mem, 0, VK_WHOLE_SIZE, 0, (void **)&out->map);
  if (r != VK_SUCCESS) {
    vkp_host_buf_destroy(dev, out);
    return vkp_vk_fail(r, "vkBindBufferMemory/vkMapMemory", "host-visible ring");
  }
  out->size = size;
  return PARITY_STATUS_OK;
}

void vkp_host_buf_destroy(parity_plugin_device_t *dev, vkp_host_buf_t *h) {
  if (h->map) vkUnmapMemory(dev->dev, h->mem);
  if (h->buf) vkDestroyBuffer(dev->dev, h->buf, NULL);
  vkp_memory_free(dev, h->mem);
  memset(h, 0, sizeof *h);
}

int32_t vkp_batch_init(parity_plugin_device_t *dev) {
  VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = dev->slot->queue_family};
  VKP_CHECK(vkCreateCommandPool(dev->dev, &cpi, NULL, &dev->cmd_pool), "vkCreateCommandPool", "");
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                             .descriptorCount = VKP_BATCH_DISPATCHES * VKP_MAX_BINDINGS};
  VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                    .maxSets = VKP_BATCH_DISPATCHES,
                                    .poolSizeCount = 1,
                                    .pPoolSizes = &ps};
  for (int i = 0; i < VKP_SLOTS; i++) {
    vkp_batch_t *b = &dev->batch[i];
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = dev->cmd_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VKP_CHECK(vkAllocateCommandBuffers(dev->dev, &ai, &b->cmd), "vkAllocateCommandBuffers", "");
    VKP_CHECK(vkCreateDescriptorPool(dev->dev, &dpi, NULL, &b->pool), "vkCreateDescriptorPool", "");
    int32_t st = vkp_host_buf_create(dev, VKP_PARAM_BYTES, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, &dev->params[i]);
    if (st != PARITY_STATUS_OK) return st;
  }
  return PARITY_STATUS_OK;
}

void vkp_batch_destroy(parity_plugin_device_t *dev) {
  for (int i = 0; i < VKP_SLOTS; i++) {
    if (dev->batch[i].pool) vkDestroyDescriptorPool(dev->dev, dev->batch[i].pool, NULL);
    vkp_host_buf_destroy(dev, &dev->params[i]);
    vkp_host_buf_destroy(dev, &dev->staging[i]);
  }
  if (dev->cmd_pool) vkDestroyCommandPool(dev->dev, dev->cmd_pool, NULL);
}

/* Wait until `serial` has completed on the device. */
int32_t vkp_wait(parity_plugin_device_t *dev, uint64_t serial) {
  if (serial <= dev->completed) return PARITY_STATUS_OK;
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &dev->timeline,
                            .pValues = &serial};
  VkResult r = vkWaitSemaphores(dev->dev, &wi, UINT64_MAX);
  if (r != VK_SUCCESS) return vkp_vk_fail(r, "vkWaitSemaphores", "waiting for submitted work");
  dev->completed = serial;
  const char *v = vkp_take_validation_error();
  if (v) return vkp_fail(PARITY_STATUS_INTERNAL, "validation layer: %s", v);
  return PARITY_STATUS_OK;
}

void vkp_full_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(
      cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

int32_t vkp_cmd(parity_plugin_device_t *dev, VkCommandBuffer *out) {
  if (dev->rec) { /* a plan is being recorded: its command buffer */
    *out = vkp_rec_cmd(dev);
    return PARITY_STATUS_OK;
  }
  vkp_batch_t *b = &dev->batch[dev->cur];
  if (!b->recording) {
    int32_t st = vkp_wait(dev, b->serial); /* the slot's previous submission */
    if (st != PARITY_STATUS_OK) return st;
    VKP_CHECK(vkResetCommandBuffer(b->cmd, 0), "vkResetCommandBuffer", "");
    VKP_CHECK(vkResetDescriptorPool(dev->dev, b->pool, 0), "vkResetDescriptorPool", "");
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VKP_CHECK(vkBeginCommandBuffer(b->cmd, &bi), "vkBeginCommandBuffer", "");
    vkp_full_barrier(b->cmd);
    b->recording = 1;
    b->sets = 0;
    b->param_used = b->staging_used = 0;
    dev->nwritten = dev->nread = 0;
    dev->need_barrier_all = 0;
  }
  *out = b->cmd;
  return PARITY_STATUS_OK;
}

int32_t vkp_submit(parity_plugin_device_t *dev, VkCommandBuffer extra, uint64_t *out_serial) {
  vkp_batch_t *b = &dev->batch[dev->cur];
  VkCommandBuffer cmds[2];
  uint32_t n = 0;
  if (b->recording) {
    b->recording = 0;
    VKP_CHECK(vkEndCommandBuffer(b->cmd), "vkEndCommandBuffer", "");
    cmds[n++] = b->cmd;
  }
  if (extra) cmds[n++] = extra;
  if (n == 0) {
    *out_serial = dev->submitted;
    return PARITY_STATUS_OK;
  }
  uint64_t value = dev->submitted + 1;
  VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .signalSemaphoreValueCount = 1,
                                      .pSignalSemaphoreValues = &value};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .pNext = &ts,
                     .commandBufferCount = n,
                     .pCommandBuffers = cmds,
                     .signalSemaphoreCount = 1,
                     .pSignalSemaphores = &dev->timeline};
  VKP_CHECK(vkQueueSubmit(dev->queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit", extra ? "a prepared plan" : "");
  dev->submitted = value;
  if (n == 2 || !extra) { /* the batch went: its slot is reused once this value is reached */
    b->serial = value;
    dev->cur = (dev->cur + 1) % VKP_SLOTS;
  }
  *out_serial = value;
  return PARITY_STATUS_OK;
}

int32_t vkp_flush(parity_plugin_device_t *dev, int wait) {
  uint64_t serial;
  int32_t st = vkp_submit(dev, VK_NULL_HANDLE, &serial);
  if (st != PARITY_STATUS_OK) return st;
  return wait ? vkp_wait(dev, dev->submitted) : PARITY_STATUS_OK;
}

static int tracked(const VkBuffer *set, uint32_t n, VkBuffer b) {
  for (uint32_t i = 0; i < n; i++)
    if (set[i] == b) return 1;
  return 0;
}

int32_t vkp_hazard(parity_plugin_device_t *dev, const VkBuffer *reads, uint32_t nreads, const VkBuffer *writes,
                   uint32_t nwrites) {
  VkCommandBuffer cmd;
  int32_t st = vkp_cmd(dev, &cmd);
  if (st != PARITY_STATUS_OK) return st;
  int need = dev->nwritten + nwrites > VKP_TRACK || dev->nread + nreads > VKP_TRACK || dev->need_barrier_all, war = 0;
  for (uint32_t i = 0; i < nreads && !need; i++) need = tracked(dev->written, dev->nwritten, reads[i]);
  for (uint32_t i = 0; i < nwrites && !need; i++) need = tracked(dev->written, dev->nwritten, writes[i]);
  for (uint32_t i = 0; i < nwrites && !need && !war; i++) war = tracked(dev->read, dev->nread, writes[i]);
  /* test knob: 1 drops every barrier inside a batch, 2 only those a write after a read alone needs */
  if (war && dev->unsafe_no_barriers != 2) need = 1;
  if (need && (dev->unsafe_no_barriers != 1 || dev->need_barrier_all)) {
    vkp_full_barrier(cmd);
    dev->nwritten = dev->nread = 0;
    dev->need_barrier_all = 0;
  }
  for (uint32_t i = 0; i < nreads; i++)
    if (!tracked(dev->read, dev->nread, reads[i])) dev->read[dev->nread++] = reads[i];
  for (uint32_t i = 0; i < nwrites; i++)
    if (!tracked(dev->written, dev->nwritten, writes[i])) dev->written[dev->nwritten++] = writes[i];
  return PARITY_STATUS_OK;
}

/* Room for `bytes` in ring `which` (0 params, 1 staging) of the current batch, flushing to the
 * next batch when it is full. */
static int32_t ring(parity_plugin_device_t *dev, int which, uint64_t bytes, uint64_t align, vkp_host_buf_t **out_buf,
                    uint64_t *out_off) {
  uint64_t cap = which ? VKP_STAGING_BYTES : VKP_PARAM_BYTES;
  if (bytes > cap)
    return vkp_fail(PARITY_STATUS_INTERNAL, "%llu bytes exceed the %llu-byte ring", (unsigned long long)bytes,
                    (unsigned long long)cap);
  if (align < 1) align = 1;
  if (dev->rec) return vkp_rec_host(dev, bytes, align, out_buf, out_off); /* the plan's own */
  for (int attempt = 0; attempt < 2; attempt++) {
    VkCommandBuffer cmd;
    int32_t st = vkp_cmd(dev, &cmd);
    if (st != PARITY_STATUS_OK) return st;
    vkp_batch_t *b = &dev->batch[dev->cur];
    uint64_t *used = which ? &b->staging_used : &b->param_used;
    uint64_t off = (*used + align - 1) / align * align;
    int full = off + bytes > cap || (!which && b->sets >= VKP_BATCH_DISPATCHES);
    if (!full) {
      vkp_host_buf_t *h = which ? &dev->staging[dev->cur] : &dev->params[dev->cur];
      if (!h->buf) {
        st = vkp_host_buf_create(dev, cap, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, h);
        if (st != PARITY_STATUS_OK) return st;
      }
      *used = off + bytes;
      if (!which) b->sets++;
      *out_buf = h;
      *out_off = off;
      return PARITY_STATUS_OK;
    }
    st = vkp_flush(dev, 0);
    if (st != PARITY_STATUS_OK) return st;
  }
  return vkp_fail(PARITY_STATUS_INTERNAL, "ring allocation failed");
}

int32_t vkp_staging(parity_plugin_device_t *dev, uint64_t bytes, uint64_t align, vkp_host_buf_t **out_buf,
                    uint64_t *out_off) {
  return ring(dev, 1, bytes, align, out_buf, out_off);
}

int32_t vkp_params(parity_plugin_device_t *dev, uint64_t bytes, vkp_host_buf_t **out_buf, uint64_t *out_off) {
  uint64_t align = dev->slot->min_align > 16 ? dev->slot->min_align : 16;
  return ring(dev, 0, bytes ? bytes : 16, align, out_buf, out_off);
}

int32_t vkp_descriptor_set(parity_plugin_device_t *dev, VkDescriptorSet *out) {
  if (dev->rec) return vkp_rec_set(dev, out);
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = dev->batch[dev->cur].pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &dev->set_layout};
  VKP_CHECK(vkAllocateDescriptorSets(dev->dev, &ai, out), "vkAllocateDescriptorSets", "");
  return PARITY_STATUS_OK;
}

void vkp_mark_used(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  b->last_use = dev->submitted + 1;
  if (dev->rec) vkp_rec_track(dev, b);
}
