/* vk_plan.c — prepared plans (the ABI 1.1 plan entries, through the kit's psup_kit_plans_t). The
 * kit issues a plan's commands through the same eager entries between begin and end; while
 * dev->rec is set, the batch functions record into the plan instead of the current batch:
 *   - vkp_cmd gives the plan's command buffer, which begins with the full barrier every batch
 *     begins with, and vkp_hazard records the same barriers as in a batch;
 *   - the parameter and staging rings give space in plan-owned host-visible buffers (written once,
 *     at recording: parameters and fill patterns do not change between runs);
 *   - descriptor sets come from plan-owned pools, bound to the plan's buffers once;
 *   - scratch buffers (reduce partials, tie counts) are plan-owned, grown as eager grows its own.
 * A run is one vkQueueSubmit of the current batch (the host's writes of new inputs) and the plan's
 * command buffer, signalling the timeline; like an eager launch it does not wait. On CPU
 * implementations (dev->plan_in_batch) the plan is a secondary command buffer instead, executed in
 * the current batch and submitted with it. Release waits for the last run, then frees everything
 * the plan owns. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define PLAN_POOL_SETS 64u            /* descriptor sets per plan pool */
#define PLAN_HOST_CHUNK (64u * 1024u) /* bytes per plan host-visible buffer (or the request) */

struct parity_plugin_plan_t {
  VkCommandBuffer cmd;
  VkDescriptorPool *pools;
  uint32_t npools, pool_used; /* sets taken from the last pool */
  vkp_host_buf_t *hosts;
  uint32_t nhosts;
  uint64_t host_used; /* bytes taken from the last host buffer */
  parity_plugin_buffer_t **scratch;
  uint32_t nscratch;             /* the last one is the current scratch */
  parity_plugin_buffer_t **bufs; /* every buffer the commands use (last_use after each run) */
  uint32_t nbufs, capbufs;
  uint32_t commands; /* dispatches and transfers recorded (PARITY_VULKAN_PLAN_FAIL_AT) */
  int32_t failed;    /* a tracking failure while recording (reported at end) */
  uint64_t serial;   /* timeline value of the last run (0: never run) */
};

/* Append one element of `size` bytes to a grown array. */
static int push(void **arr, uint32_t *n, size_t size, const void *elem) {
  void *g = realloc(*arr, ((size_t)*n + 1) * size);
  if (!g) return -1;
  memcpy((char *)g + (size_t)*n * size, elem, size);
  *arr = g;
  (*n)++;
  return 0;
}

static void plan_free(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  if (p->cmd) vkFreeCommandBuffers(dev->dev, dev->cmd_pool, 1, &p->cmd);
  for (uint32_t i = 0; i < p->npools; i++) vkDestroyDescriptorPool(dev->dev, p->pools[i], NULL);
  for (uint32_t i = 0; i < p->nhosts; i++) vkp_host_buf_destroy(dev, &p->hosts[i]);
  for (uint32_t i = 0; i < p->nscratch; i++) vkp_buffer_free(dev, p->scratch[i]);
  free(p->pools);
  free(p->hosts);
  free(p->scratch);
  free(p->bufs);
  free(p);
  dev->plans_live--;
}

int32_t vkp_plan_begin(parity_plugin_device_t *dev) {
  if (dev->rec) return vkp_fail(PARITY_STATUS_INTERNAL, "plan_prepare: a plan is already being recorded");
  /* what eager work is queued goes first: the plan's recording then starts with fresh hazard
   * tracking, and the batch is not touched while the plan records */
  int32_t st = vkp_flush(dev, 0);
  if (st != PARITY_STATUS_OK) return st;
  parity_plugin_plan_t *p = calloc(1, sizeof *p);
  if (!p) return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  dev->plans_live++;
  VkCommandBufferAllocateInfo ai = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = dev->cmd_pool,
      .level = dev->plan_in_batch ? VK_COMMAND_BUFFER_LEVEL_SECONDARY : VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1};
  VkResult r = vkAllocateCommandBuffers(dev->dev, &ai, &p->cmd);
  if (r != VK_SUCCESS) {
    p->cmd = VK_NULL_HANDLE;
    plan_free(dev, p);
    return vkp_vk_fail(r, "vkAllocateCommandBuffers", "a prepared plan");
  }
  /* simultaneous use: a run may be submitted while the previous one is still pending (queue
   * order and the barrier the buffer begins with keep them in order; nothing in it changes) */
  VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                                 .pInheritanceInfo = dev->plan_in_batch ? &inh : NULL};
  r = vkBeginCommandBuffer(p->cmd, &bi);
  if (r != VK_SUCCESS) {
    plan_free(dev, p);
    return vkp_vk_fail(r, "vkBeginCommandBuffer", "a prepared plan");
  }
  vkp_full_barrier(p->cmd);
  dev->nwritten = dev->nread = 0;
  dev->rec = p;
  return PARITY_STATUS_OK;
}

int32_t vkp_plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out) {
  parity_plugin_plan_t *p = dev->rec;
  dev->rec = NULL;
  dev->nwritten = dev->nread = 0; /* the next eager command starts a new batch */
  if (!p) return ok ? vkp_fail(PARITY_STATUS_INTERNAL, "plan_prepare: no plan is being recorded") : PARITY_STATUS_OK;
  int32_t st = ok ? p->failed : PARITY_STATUS_OK;
  if (ok && st != PARITY_STATUS_OK) vkp_fail(st, "plan_prepare: out of host memory tracking the plan's buffers");
  VkResult r = vkEndCommandBuffer(p->cmd);
  if (ok && st == PARITY_STATUS_OK && r != VK_SUCCESS) st = vkp_vk_fail(r, "vkEndCommandBuffer", "a prepared plan");
  if (!ok || st != PARITY_STATUS_OK) {
    plan_free(dev, p); /* nothing of it was submitted */
    return st;
  }
  vkp_log(PARITY_LOG_DEBUG,
          "plan prepared: %u dispatches and uploads, %u descriptor sets, %u scratch buffers, %u buffers", p->commands,
          (p->npools ? p->npools - 1 : 0) * PLAN_POOL_SETS + p->pool_used, p->nscratch, p->nbufs);
  *out = p;
  return PARITY_STATUS_OK;
}

/* A replay inside the current batch: the plan begins with a full barrier, and the batch's next
 * command gets one; the batch is submitted once it holds as many dispatches as a full one. */
static int32_t run_in_batch(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  VkCommandBuffer cmd;
  int32_t st = vkp_cmd(dev, &cmd);
  if (st != PARITY_STATUS_OK) return st;
  vkCmdExecuteCommands(cmd, 1, &p->cmd);
  dev->need_barrier_all = 1;
  p->serial = dev->submitted + 1; /* this batch's value */
  for (uint32_t i = 0; i < p->nbufs; i++) p->bufs[i]->last_use = p->serial;
  vkp_batch_t *b = &dev->batch[dev->cur];
  b->sets += p->commands;
  return b->sets >= VKP_BATCH_DISPATCHES ? vkp_flush(dev, 0) : PARITY_STATUS_OK;
}

int32_t vkp_plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  if (dev->rec) return vkp_fail(PARITY_STATUS_INTERNAL, "plan_run: called while a plan is being recorded");
  if (dev->plan_in_batch) return run_in_batch(dev, p);
  uint64_t serial;
  int32_t st = vkp_submit(dev, p->cmd, &serial);
  if (st != PARITY_STATUS_OK) return st;
  p->serial = serial;
  for (uint32_t i = 0; i < p->nbufs; i++) p->bufs[i]->last_use = serial;
  return PARITY_STATUS_OK;
}

void vkp_plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  if (p->serial > dev->submitted) vkp_flush(dev, 0); /* its last run is still in the batch */
  if (p->serial) vkp_wait(dev, p->serial);           /* or may still be executing */
  plan_free(dev, p);
}

/* ---- the recording side of the batch functions ------------------------------------------------ */
/* PARITY_VULKAN_PLAN_FAIL_AT (tests): the Nth command recorded into a plan fails. */
static int32_t count_command(parity_plugin_device_t *dev) {
  parity_plugin_plan_t *p = dev->rec;
  if (++p->commands == vkp_knobs.plan_fail_at)
    return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                    "plan_prepare: recording stopped at command %u (PARITY_VULKAN_PLAN_FAIL_AT)", p->commands);
  return PARITY_STATUS_OK;
}

VkCommandBuffer vkp_rec_cmd(parity_plugin_device_t *dev) { return dev->rec->cmd; }

int32_t vkp_rec_host(parity_plugin_device_t *dev, uint64_t bytes, uint64_t align, vkp_host_buf_t **out_buf,
                     uint64_t *out_off) {
  parity_plugin_plan_t *p = dev->rec;
  uint64_t off = (p->host_used + align - 1) / align * align;
  if (!p->nhosts || off + bytes > p->hosts[p->nhosts - 1].size) {
    vkp_host_buf_t h;
    uint64_t size = bytes > PLAN_HOST_CHUNK ? bytes : PLAN_HOST_CHUNK;
    VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    int32_t st = vkp_host_buf_create(dev, size, usage, &h);
    if (st != PARITY_STATUS_OK) return st;
    if (push((void **)&p->hosts, &p->nhosts, sizeof h, &h) != 0) {
      vkp_host_buf_destroy(dev, &h);
      return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
    }
    off = 0;
  }
  p->host_used = off + bytes;
  *out_buf = &p->hosts[p->nhosts - 1];
  *out_off = off;
  return count_command(dev); /* every dispatch and upload takes host space once */
}

int32_t vkp_rec_set(parity_plugin_device_t *dev, VkDescriptorSet *out) {
  parity_plugin_plan_t *p = dev->rec;
  if (!p->npools || p->pool_used == PLAN_POOL_SETS) {
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               .descriptorCount = PLAN_POOL_SETS * VKP_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = PLAN_POOL_SETS,
                                      .poolSizeCount = 1,
                                      .pPoolSizes = &ps};
    VkDescriptorPool pool;
    VKP_CHECK(vkCreateDescriptorPool(dev->dev, &dpi, NULL, &pool), "vkCreateDescriptorPool", "a prepared plan");
    if (push((void **)&p->pools, &p->npools, sizeof pool, &pool) != 0) {
      vkDestroyDescriptorPool(dev->dev, pool, NULL);
      return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
    }
    p->pool_used = 0;
  }
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = p->pools[p->npools - 1],
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &dev->set_layout};
  VKP_CHECK(vkAllocateDescriptorSets(dev->dev, &ai, out), "vkAllocateDescriptorSets", "a prepared plan");
  p->pool_used++;
  return PARITY_STATUS_OK;
}

int32_t vkp_rec_scratch(parity_plugin_device_t *dev, uint64_t bytes, parity_plugin_buffer_t **out) {
  parity_plugin_plan_t *p = dev->rec;
  if (psup_kit_scratch_fits(vkp_knobs.scratch, p->nscratch ? p->scratch[p->nscratch - 1]->size : 0, bytes)) {
    *out = p->scratch[p->nscratch - 1];
    return PARITY_STATUS_OK;
  }
  /* grown as eager grows its own; the smaller ones stay: earlier commands of the plan use them */
  parity_plugin_buffer_t *b;
  int32_t st = vkp_scratch_alloc(dev, bytes, &b);
  if (st != PARITY_STATUS_OK) return st;
  if (push((void **)&p->scratch, &p->nscratch, sizeof b, &b) != 0) {
    vkp_buffer_free(dev, b);
    return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "plan_prepare: out of host memory");
  }
  *out = b;
  return PARITY_STATUS_OK;
}

int32_t vkp_rec_track(parity_plugin_device_t *dev, parity_plugin_buffer_t *b) {
  parity_plugin_plan_t *p = dev->rec;
  for (uint32_t i = p->nbufs; i-- > 0;)
    if (p->bufs[i] == b) return PARITY_STATUS_OK;
  if (p->nbufs == p->capbufs) {
    uint32_t cap = p->capbufs ? 2 * p->capbufs : 16;
    parity_plugin_buffer_t **g = realloc(p->bufs, cap * sizeof *g);
    if (!g) return p->failed = PARITY_STATUS_OUT_OF_MEMORY;
    p->bufs = g;
    p->capbufs = cap;
  }
  p->bufs[p->nbufs++] = b;
  return PARITY_STATUS_OK;
}
