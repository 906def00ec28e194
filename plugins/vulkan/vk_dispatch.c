/* vk_dispatch.c — pipelines created on first use (one per shader variant, op, work-group size
 * and extra specialization value), binding windows, launch geometry and dispatch recording. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "vk_window.h"

/* ---- binding windows ------------------------------------------------------------------------ */
static uint64_t window_align(const parity_plugin_device_t *dev, uint32_t esize) {
  uint64_t a = dev->slot->min_align;
  return a > esize ? a : esize;
}

int32_t vkp_check_window(const parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  for (int pass = 0; pass < 2; pass++) {
    uint32_t n = pass ? d->num_outputs : d->num_inputs;
    for (uint32_t i = 0; i < n; i++) {
      const parity_tensor_desc_t *t = pass ? d->outputs[i] : d->inputs[i];
      if (!t) continue;
      int64_t lo, hi;
      if (psup_byte_extent(t, &lo, &hi) != 0)
        return vkp_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s: %s %u has an extent that overflows", psup_op_name(d->op),
                        pass ? "output" : "input", i);
      uint64_t need = (uint64_t)(hi - lo) + window_align(dev, psup_dtype_size(t->dtype));
      if (need > dev->slot->max_range)
        return vkp_fail(PARITY_STATUS_UNSUPPORTED,
                        "%s: %s %u spans %lld bytes; one binding may span at most "
                        "%llu (maxStorageBufferRange of %s, capped at 2^31)",
                        psup_op_name(d->op), pass ? "output" : "input", i, (long long)(hi - lo),
                        (unsigned long long)dev->slot->max_range, dev->slot->kit.info.name);
    }
  }
  return PARITY_STATUS_OK;
}

/* The window [*off, *off + *range) of t's buffer, and t's element 0 as an element index in it
 * (vk_window.c: the tensor's bytes only). */
static void window_of(const parity_plugin_device_t *dev, const parity_tensor_desc_t *t, uint64_t *off, uint64_t *range,
                      int64_t *base) {
  uint32_t es = psup_dtype_size(t->dtype);
  int64_t lo = 0, hi = 0;
  psup_byte_extent(t, &lo, &hi);
  vkp_window_t w =
      vkp_window(lo, hi, t->offset_bytes, es, window_align(dev, es), t->buffer->alloc, dev->slot->max_range);
  *off = w.off;
  *range = w.range;
  *base = w.base;
}

int32_t vkp_bind_bases(parity_plugin_device_t *dev, const vkp_launch_t *l, vkp_bases_t *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t i = 0; i < l->noperands; i++) {
    const parity_tensor_desc_t *t = l->operands[i].t;
    if (!t || !t->buffer) continue;
    uint64_t off, range;
    window_of(dev, t, &off, &range, &out->base[i]);
  }
  return PARITY_STATUS_OK;
}

void vkp_fold_groups(const parity_plugin_device_t *dev, uint64_t total, uint32_t groups[3]) {
  if (total < 1) total = 1;
  uint64_t x = total < dev->fold_x ? total : dev->fold_x;
  uint64_t y = (total + x - 1) / x;
  if (y > dev->slot->max_groups[1]) y = dev->slot->max_groups[1];
  groups[0] = (uint32_t)x;
  groups[1] = (uint32_t)y;
  groups[2] = 1;
}

void vkp_groups_for(const parity_plugin_device_t *dev, uint64_t items, uint32_t local, uint32_t groups[3]) {
  uint64_t total = (items + local - 1) / local;
  if (total < 1) total = 1;
  if (total > dev->max_groups) total = dev->max_groups;
  /* llvmpipe stops every loop of an invocation after 65,535 iterations in all (Mesa's
   * LP_MAX_TGSI_LOOP_ITERATIONS) and leaves the rest unwritten: on CPU implementations keep each
   * invocation under 4,096 items (an item walks at most 8 axes), whatever the cap says */
  if (dev->slot->cpu_like) {
    uint64_t need = (items + (uint64_t)local * 4096u - 1) / ((uint64_t)local * 4096u);
    if (total < need) total = need;
  }
  vkp_fold_groups(dev, total, groups);
}

void vkp_groups_bounded(const parity_plugin_device_t *dev, uint64_t items, uint32_t local, uint64_t cost,
                        uint32_t groups[3]) {
  vkp_groups_for(dev, items, local, groups);
  if (!dev->slot->cpu_like) return;
  uint64_t per = VKP_LOOP_BUDGET / (cost ? cost : 1);
  if (per == 0) per = 1;
  uint64_t need = ((items + per - 1) / per + local - 1) / local;
  if (need <= (uint64_t)groups[0] * groups[1]) return;
  vkp_fold_groups(dev, need, groups);
}

/* The embedded variants are sorted by name (generated vk_shaders.c): binary search. */
static int spv_lookup(const char *name) {
  int lo = 0, hi = VK_SPV_COUNT - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, c = strcmp(vk_spirv[mid].name, name);
    if (c == 0) return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

int vkp_spv_find(const char *kernel, const char *suffix) {
  char name[96];
  if (suffix)
    snprintf(name, sizeof name, "%s_%s", kernel, suffix);
  else
    snprintf(name, sizeof name, "%s", kernel);
  int id = spv_lookup(name);
  if (id < 0) vkp_fail(PARITY_STATUS_UNSUPPORTED, "no shader variant %s", name);
  return id;
}

int vkp_spv_find_math(const parity_plugin_device_t *dev, const char *kernel, const char *suffix, int32_t dtype) {
  int narrow = dtype == PARITY_DTYPE_F32 || dtype == PARITY_DTYPE_F16 || dtype == PARITY_DTYPE_BF16;
  if (narrow && dev->slot->dmath) {
    char name[96];
    snprintf(name, sizeof name, "%s_%s_dmath", kernel, suffix);
    int id = spv_lookup(name);
    if (id >= 0) return id;
  }
  return vkp_spv_find(kernel, suffix);
}

/* ---- pipelines ------------------------------------------------------------------------------ */
static uint64_t pipe_key(const vkp_launch_t *l) {
  return 1ull + (uint64_t)l->spv + ((uint64_t)(l->op & 0xfff) << 12) + ((uint64_t)(l->local & 0xfff) << 24) +
         ((uint64_t)(uint32_t)l->extra << 36);
}

static int32_t grow(parity_plugin_device_t *dev) {
  uint32_t cap = dev->pipe_cap ? dev->pipe_cap * 2 : 256;
  vkp_pipe_t *n = calloc(cap, sizeof *n);
  if (!n) return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY, "pipeline table: out of host memory");
  for (uint32_t i = 0; i < dev->pipe_cap; i++) {
    if (!dev->pipes[i].key) continue;
    uint32_t h = (uint32_t)(dev->pipes[i].key * 0x9E3779B97F4A7C15ull >> 40) & (cap - 1);
    while (n[h].key) h = (h + 1) & (cap - 1);
    n[h] = dev->pipes[i];
  }
  free(dev->pipes);
  dev->pipes = n;
  dev->pipe_cap = cap;
  return PARITY_STATUS_OK;
}

/* Under the validation layer, the kernel's name on its module and pipeline: the layer's messages
 * then name the kernel (a GPU-assisted report otherwise gives handles and an instruction index). */
static void name_object(parity_plugin_device_t *dev, VkObjectType type, uint64_t handle, const char *name) {
  if (!vkp_knobs.validation) return;
  PFN_vkSetDebugUtilsObjectNameEXT set_name =
      (PFN_vkSetDebugUtilsObjectNameEXT)vkGetInstanceProcAddr(vkp_instance, "vkSetDebugUtilsObjectNameEXT");
  if (!set_name) return;
  VkDebugUtilsObjectNameInfoEXT ni = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
                                      .objectType = type,
                                      .objectHandle = handle,
                                      .pObjectName = name};
  set_name(dev->dev, &ni);
}

static int32_t pipeline(parity_plugin_device_t *dev, const vkp_launch_t *l, VkPipeline *out) {
  uint64_t key = pipe_key(l);
  if (dev->pipe_cap) {
    uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (dev->pipe_cap - 1);
    for (; dev->pipes[h].key; h = (h + 1) & (dev->pipe_cap - 1))
      if (dev->pipes[h].key == key) {
        *out = dev->pipes[h].pipe;
        return PARITY_STATUS_OK;
      }
  }
  if (l->spv < 0 || l->spv >= VK_SPV_COUNT) return vkp_fail(PARITY_STATUS_INTERNAL, "bad shader id %d", l->spv);
  if (!dev->modules[l->spv]) {
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = vk_spirv_words(&vk_spirv[l->spv]) * 4,
                                   .pCode = vk_spirv[l->spv].code};
    VKP_CHECK(vkCreateShaderModule(dev->dev, &mi, NULL, &dev->modules[l->spv]), "vkCreateShaderModule",
              vk_spirv[l->spv].name);
    name_object(dev, VK_OBJECT_TYPE_SHADER_MODULE, (uint64_t)dev->modules[l->spv], vk_spirv[l->spv].name);
  }
  /* 0: work-group size, 1: op, 2: extra, 3/4: the device's double/float fma is fused, 5: which
   * invocation does which lane's work in the shared-memory kernels (PARITY_VULKAN_LANE_ORDER;
   * modules without constant 5 ignore it) */
  int32_t spec[6] = {(int32_t)l->local,   l->op, l->extra, dev->fused_fma64 ? 1 : 0, dev->fused_fma32 ? 1 : 0,
                     vkp_knobs.lane_order};
  VkSpecializationMapEntry entries[6] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}, {4, 16, 4}, {5, 20, 4}};
  VkSpecializationInfo si = {.mapEntryCount = 6, .pMapEntries = entries, .dataSize = sizeof spec, .pData = spec};
  VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                    .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                              .module = dev->modules[l->spv],
                                              .pName = "main",
                                              .pSpecializationInfo = &si},
                                    .layout = dev->pipe_layout};
  VkPipeline p;
  VKP_CHECK(vkCreateComputePipelines(dev->dev, dev->pcache, 1, &ci, NULL, &p), "vkCreateComputePipelines",
            vk_spirv[l->spv].name);
  name_object(dev, VK_OBJECT_TYPE_PIPELINE, (uint64_t)p, vk_spirv[l->spv].name);
  dev->pcache_dirty = 1;
  if (2 * (dev->pipe_count + 1) > dev->pipe_cap) {
    int32_t st = grow(dev);
    if (st != PARITY_STATUS_OK) {
      vkDestroyPipeline(dev->dev, p, NULL);
      return st;
    }
  }
  uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (dev->pipe_cap - 1);
  while (dev->pipes[h].key) h = (h + 1) & (dev->pipe_cap - 1);
  dev->pipes[h].key = key;
  dev->pipes[h].pipe = p;
  dev->pipe_count++;
  *out = p;
  return PARITY_STATUS_OK;
}

/* ---- dispatch ------------------------------------------------------------------------------- */
int32_t vkp_dispatch(parity_plugin_device_t *dev, const vkp_launch_t *l) {
  VkPipeline pipe = VK_NULL_HANDLE;
  int32_t st = pipeline(dev, l, &pipe);
  if (st != PARITY_STATUS_OK) return st;
  vkp_host_buf_t *ph;
  uint64_t poff;
  /* the parameter block, then a 16-byte placeholder window of this dispatch alone for the operand
   * slots it does not use (shaders may declare them writable: a window shared by every dispatch
   * would look, to the validation layer's synchronization checks, like writes that race) */
  uint64_t align = dev->slot->min_align > 16 ? dev->slot->min_align : 16;
  uint64_t psize = l->params_size ? l->params_size : 16, spare = (psize + align - 1) / align * align;
  st = vkp_params(dev, spare + 16, &ph, &poff); /* may start a new batch: first */
  if (st != PARITY_STATUS_OK) return st;
  if (l->params_size) memcpy(ph->map + poff, l->params, l->params_size);

  VkBuffer reads[VKP_MAX_OPERANDS + 1], writes[VKP_MAX_OPERANDS];
  uint32_t nr = 0, nw = 0;
  VkDescriptorBufferInfo bi[VKP_MAX_BINDINGS];
  bi[0] = (VkDescriptorBufferInfo){ph->buf, poff, psize};
  for (uint32_t i = 1; i < VKP_MAX_BINDINGS; i++) bi[i] = (VkDescriptorBufferInfo){ph->buf, poff + spare, 16};
  bi[VKP_MAX_BINDINGS - 1] = (VkDescriptorBufferInfo){dev->mathtab->buf, 0, VK_WHOLE_SIZE};
  for (uint32_t i = 0; i < l->noperands; i++) {
    const parity_tensor_desc_t *t = l->operands[i].t;
    if (!t || !t->buffer) continue;
    uint64_t off, range;
    int64_t base;
    window_of(dev, t, &off, &range, &base);
    bi[i + 1] = (VkDescriptorBufferInfo){t->buffer->buf, off, range};
    if (l->operands[i].written)
      writes[nw++] = t->buffer->buf;
    else
      reads[nr++] = t->buffer->buf;
    vkp_mark_used(dev, t->buffer);
  }
  reads[nr++] = dev->mathtab->buf;
  /* VUID-VkWriteDescriptorSet-descriptorType-00328, checked against the alignment the plugin
   * keeps (PARITY_VULKAN_MIN_ALIGN: a GPU's, where the validation layer knows lavapipe's 16) */
  for (uint32_t i = 0; i < VKP_MAX_BINDINGS; i++)
    if (bi[i].offset % dev->slot->min_align)
      return vkp_fail(PARITY_STATUS_INTERNAL,
                      "%s: binding %u's offset %llu is not a multiple of minStorageBufferOffsetAlignment (%u)",
                      vk_spirv[l->spv].name, i, (unsigned long long)bi[i].offset, dev->slot->min_align);
  st = vkp_hazard(dev, reads, nr, writes, nw);
  VkCommandBuffer cmd;
  if (st == PARITY_STATUS_OK) st = vkp_cmd(dev, &cmd);
  if (st != PARITY_STATUS_OK) return st;
  VkDescriptorSet set;
  if ((st = vkp_descriptor_set(dev, &set)) != PARITY_STATUS_OK) return st;
  /* one write for all the bindings: an update past a binding's one descriptor rolls over into the
   * next binding (all of one type and stage) */
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                            .dstSet = set,
                            .dstBinding = 0,
                            .descriptorCount = VKP_MAX_BINDINGS,
                            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .pBufferInfo = bi};
  vkUpdateDescriptorSets(dev->dev, 1, &w, 0, NULL);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipe_layout, 0, 1, &set, 0, NULL);
  if (l->push_size)
    vkCmdPushConstants(cmd, dev->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (l->push_size + 3) & ~3u, l->push);
  vkCmdDispatch(cmd, l->groups[0], l->groups[1], l->groups[2]);
  return PARITY_STATUS_OK;
}

int32_t vkp_scratch_alloc(parity_plugin_device_t *dev, uint64_t bytes, parity_plugin_buffer_t **out) {
  return vkp_buffer_alloc(dev, psup_kit_scratch_size(vkp_knobs.scratch, bytes, dev->slot->kit.info.max_buffer_bytes),
                          out);
}

int32_t vkp_scratch(parity_plugin_device_t *dev, uint64_t bytes, parity_plugin_buffer_t **out) {
  if (bytes == 0) bytes = 16;
  if (dev->rec) return vkp_rec_scratch(dev, bytes, out); /* owned by the plan being recorded */
  if (psup_kit_scratch_fits(vkp_knobs.scratch, dev->scratch ? dev->scratch->size : 0, bytes)) {
    *out = dev->scratch;
    return PARITY_STATUS_OK;
  }
  parity_plugin_buffer_t *b;
  int32_t st = vkp_scratch_alloc(dev, bytes, &b);
  if (st != PARITY_STATUS_OK) return st;
  vkp_buffer_free(dev, dev->scratch); /* waits for work still using it */
  dev->scratch = b;
  *out = b;
  return PARITY_STATUS_OK;
}
