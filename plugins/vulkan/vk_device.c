/* vk_device.c — device open/close: the logical device with the features parity uses, its compute
 * queue, memory types, the one descriptor-set and pipeline layout every kernel shares, and the
 * launch geometry knobs. */
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "vk_internal.h"

/* the first memory type among `bits` with every property of `want` and none of `avoid`, or -1 */
static int find_memory(const VkPhysicalDeviceMemoryProperties *mp, VkMemoryPropertyFlags want,
                       VkMemoryPropertyFlags avoid, uint32_t bits) {
  for (uint32_t i = 0; i < mp->memoryTypeCount && i < 32; i++) {
    VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
    if ((bits >> i & 1u) && (f & want) == want && !(f & avoid)) return (int)i;
  }
  return -1;
}

/* The memory type of an allocation whose VkMemoryRequirements allow `bits`: the device's preferred
 * one (host: host-visible and coherent, cached where possible; else device-local) when allowed,
 * else the first allowed type with the properties it needs (host-visible and coherent for host;
 * device-local, then any, for buffers); or a failure naming the bits. */
static int32_t memory_type(parity_plugin_device_t *dev, uint32_t bits, int host, const char *what, uint32_t *out) {
  bits &= host ? vkp_knobs.ring_types : vkp_knobs.buffer_types;
  uint32_t pref = host ? dev->mem_host : dev->mem_device;
  int t = -1;
  if (bits & (1u << pref))
    t = (int)pref;
  else if (host)
    t = find_memory(&dev->mem_props, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                    bits);
  else if ((t = find_memory(&dev->mem_props, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, bits)) < 0)
    t = find_memory(&dev->mem_props, 0, 0, bits);
  if (t < 0)
    return vkp_fail(PARITY_STATUS_DEVICE_ERROR,
                    "%s: none of the memory types its buffer may use (memoryTypeBits 0x%x of %u types) is %s", what,
                    bits, dev->mem_props.memoryTypeCount, host ? "host-visible and host-coherent" : "usable");
  *out = (uint32_t)t;
  return PARITY_STATUS_OK;
}

int32_t vkp_memory_alloc(parity_plugin_device_t *dev, const VkMemoryRequirements *req, int host, const char *what,
                         VkDeviceMemory *out, uint32_t *out_type) {
  *out = VK_NULL_HANDLE;
  uint32_t type = 0;
  int32_t st = memory_type(dev, req->memoryTypeBits, host, what, &type);
  if (st != PARITY_STATUS_OK) return st;
  if (dev->allocs >= dev->slot->max_allocs)
    return vkp_fail(PARITY_STATUS_OUT_OF_MEMORY,
                    "%s: %u device memory allocations are live, the most %s allows (maxMemoryAllocationCount%s; "
                    "parity allocates one per buffer)",
                    what, dev->allocs, dev->slot->kit.info.name,
                    vkp_knobs.max_allocs == dev->slot->max_allocs ? ", PARITY_VULKAN_MAX_ALLOCATIONS" : "");
  VkMemoryAllocateInfo ai = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req->size, .memoryTypeIndex = type};
  VKP_CHECK(vkAllocateMemory(dev->dev, &ai, NULL, out), "vkAllocateMemory", what);
  dev->allocs++;
  if (out_type) *out_type = type;
  return PARITY_STATUS_OK;
}

void vkp_memory_free(parity_plugin_device_t *dev, VkDeviceMemory mem) {
  if (!mem) return;
  vkFreeMemory(dev->dev, mem, NULL);
  dev->allocs--;
}

void vkp_device_close(parity_plugin_device_t *dev) {
  if (!dev) return;
  if (dev->plans_live) /* the host releases every plan first (tests/vulkan/test_plan.c looks for this) */
    vkp_log(PARITY_LOG_WARNING, "device_close: %u prepared plans not released", dev->plans_live);
  if (dev->dev) {
    vkDeviceWaitIdle(dev->dev);
    vkp_pipeline_cache_save(dev);
    for (uint32_t i = 0; i < dev->pipe_cap; i++)
      if (dev->pipes[i].pipe) vkDestroyPipeline(dev->dev, dev->pipes[i].pipe, NULL);
    for (int i = 0; i < VK_SPV_COUNT; i++)
      if (dev->modules[i]) vkDestroyShaderModule(dev->dev, dev->modules[i], NULL);
    if (dev->pcache) vkDestroyPipelineCache(dev->dev, dev->pcache, NULL);
    vkp_buffer_free(dev, dev->scratch);
    vkp_buffer_free(dev, dev->mathtab);
    vkp_batch_destroy(dev);
    vkp_sub_destroy(dev); /* blocks whose buffers the host did not free */
    if (dev->pipe_layout) vkDestroyPipelineLayout(dev->dev, dev->pipe_layout, NULL);
    if (dev->set_layout) vkDestroyDescriptorSetLayout(dev->dev, dev->set_layout, NULL);
    if (dev->timeline) vkDestroySemaphore(dev->dev, dev->timeline, NULL);
    vkDestroyDevice(dev->dev, NULL);
  }
  free(dev->pipes);
  free(dev);
}

static int32_t create_device(parity_plugin_device_t *dev) {
  const vkp_slot_t *s = dev->slot;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                               .queueFamilyIndex = s->queue_family,
                               .queueCount = 1,
                               .pQueuePriorities = &prio};
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .timelineSemaphore = VK_TRUE,
                                          .storageBuffer8BitAccess = s->has_8bit ? VK_TRUE : VK_FALSE,
                                          .shaderInt8 = s->has_8bit ? VK_TRUE : VK_FALSE};
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                          .pNext = &f12,
                                          .storageBuffer16BitAccess = s->has_16bit ? VK_TRUE : VK_FALSE};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
  f2.features.shaderFloat64 = s->has_f64 ? VK_TRUE : VK_FALSE;
  f2.features.shaderInt64 = s->has_i64 ? VK_TRUE : VK_FALSE;
  f2.features.shaderInt16 = s->has_16bit ? VK_TRUE : VK_FALSE;
  VkDeviceCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1, .pQueueCreateInfos = &q};
  VKP_CHECK(vkCreateDevice(s->phys, &ci, NULL, &dev->dev), "vkCreateDevice", s->kit.info.name);
  vkGetDeviceQueue(dev->dev, s->queue_family, 0, &dev->queue);
  VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                   .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                   .initialValue = 0};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
  VKP_CHECK(vkCreateSemaphore(dev->dev, &sci, NULL, &dev->timeline), "vkCreateSemaphore", "timeline");

  VkPhysicalDeviceMemoryProperties *mp = &dev->mem_props;
  vkGetPhysicalDeviceMemoryProperties(s->phys, mp);
  int dl = find_memory(mp, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, ~0u);
  int host = find_memory(
      mp,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
      0, ~0u);
  if (host < 0)
    host = find_memory(mp, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0, ~0u);
  if (dl < 0) dl = host;
  if (dl < 0 || host < 0)
    return vkp_fail(PARITY_STATUS_UNAVAILABLE, "%s has no usable memory type (device-local and host-coherent)",
                    s->kit.info.name);
  dev->mem_device = (uint32_t)dl;
  dev->mem_host = (uint32_t)host;

  /* one layout for every kernel: binding 0 = parameters, 1..7 = operands */
  VkDescriptorSetLayoutBinding b[VKP_MAX_BINDINGS];
  for (uint32_t i = 0; i < VKP_MAX_BINDINGS; i++)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo lci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = VKP_MAX_BINDINGS, .pBindings = b};
  VKP_CHECK(vkCreateDescriptorSetLayout(dev->dev, &lci, NULL, &dev->set_layout), "vkCreateDescriptorSetLayout", "");
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = VKP_PUSH_BYTES};
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &dev->set_layout,
                                    .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &pcr};
  VKP_CHECK(vkCreatePipelineLayout(dev->dev, &pli, NULL, &dev->pipe_layout), "vkCreatePipelineLayout", "");
  return PARITY_STATUS_OK;
}

/* device_open's part (the kit, parity_support/gpu_kit.h, allocates the zeroed device and closes it
 * when this fails) */
int32_t vkp_device_init(parity_plugin_device_t *dev, uint32_t index) {
  dev->index = index;
  dev->slot = vkp_slot(index);
  /* CPU implementations: few large groups with long per-invocation loops; GPUs: fill the device
   * and let invocations stride through the rest */
  dev->local = 64;
  dev->max_groups = dev->slot->cpu_like ? 256u : 65535u * 8u;
  if (vkp_knobs.max_groups) dev->max_groups = vkp_knobs.max_groups;
  /* where work-groups fold into y: the device's x limit, or lower (PARITY_VULKAN_FOLD_GROUPS) so
   * that the fold runs on devices and tests that never launch 65,535 groups */
  dev->fold_x = dev->slot->max_groups[0];
  if (vkp_knobs.fold_groups && vkp_knobs.fold_groups < dev->fold_x) dev->fold_x = vkp_knobs.fold_groups;
  /* test only: drop the barriers between dependent commands of a batch, so that the validation
   * layer's synchronization checks can be shown to catch a missing one */
  dev->unsafe_no_barriers = vkp_knobs.unsafe_no_barriers;
  /* a replayed plan: a submission of its own on GPUs (the device starts at once); on CPU
   * implementations, where a submission costs as much as several launches (lavapipe: a context
   * flush, a fence and the timeline signal per submission), inside the current batch
   * (PARITY_VULKAN_PLAN_SUBMIT) */
  dev->plan_in_batch = vkp_knobs.plan_submit == 2 || (vkp_knobs.plan_submit == 0 && dev->slot->cpu_like);
  int32_t st = create_device(dev);
  if (st == PARITY_STATUS_OK) st = vkp_batch_init(dev);
  if (st == PARITY_STATUS_OK) st = vkp_mathtab_create(dev);
  if (st == PARITY_STATUS_OK) st = vkp_pipeline_cache_load(dev);
  if (st == PARITY_STATUS_OK) st = vkp_probe(dev);
  return st;
}
