/* vk_ref.c — the raw Vulkan dispatch reference (vk_ref.h). The Vulkan headers give the types only:
 * the loader is opened with dlopen, so parity-bench neither links Vulkan nor needs it. */
#define _POSIX_C_SOURCE 200809L
#include "vk_ref.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef PARITY_BENCH_VULKAN
#include <dlfcn.h>
#include <string.h>
#include <vulkan/vulkan.h>

static const uint32_t spirv[] =
#include "vk_ref_add.inc"
    ;

/* the calls it makes, by name */
// clang-format off
#define VK_REF_CALLS(X)                                                                                         \
  X(vkCreateInstance) X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice)          \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements)  \
  X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkCreateShaderModule)              \
  X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                       \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline)         \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)    \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkResetCommandBuffer)            \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets)                 \
  X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences)                    \
  X(vkWaitForFences) X(vkQueueSubmit) X(vkDeviceWaitIdle)
// clang-format on

struct vk_ref {
#define VK_REF_FIELD(name) PFN_##name name;
  VK_REF_CALLS(VK_REF_FIELD)
  VkInstance inst;
  VkDevice dev;
  VkQueue queue;
  VkBuffer buf[3];
  VkDeviceMemory mem[3];
  VkShaderModule module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipe;
  VkDescriptorPool pool;
  VkDescriptorSet set;
  VkCommandPool cmd_pool;
  VkCommandBuffer cmd;
  VkFence fence;
};

/* the physical device named `name`, its compute queue family in *family */
static VkPhysicalDevice find_device(vk_ref *r, const char *name, uint32_t *family) {
  VkPhysicalDevice pds[16];
  uint32_t n = 16;
  VkResult e = r->vkEnumeratePhysicalDevices(r->inst, &n, pds);
  if (e != VK_SUCCESS && e != VK_INCOMPLETE) return VK_NULL_HANDLE;
  for (uint32_t i = 0; i < n; i++) {
    VkPhysicalDeviceProperties p;
    r->vkGetPhysicalDeviceProperties(pds[i], &p);
    if (strcmp(p.deviceName, name)) continue;
    VkQueueFamilyProperties qf[32];
    uint32_t nq = 32;
    r->vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nq, qf);
    for (uint32_t q = 0; q < nq; q++)
      if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        *family = q;
        return pds[i];
      }
  }
  return VK_NULL_HANDLE;
}

/* three 16-byte host-visible storage buffers holding {1, 2} */
static VkResult make_buffers(vk_ref *r, VkPhysicalDevice pd) {
  VkPhysicalDeviceMemoryProperties mp;
  r->vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  for (int i = 0; i < 3; i++) {
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 16,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult e = r->vkCreateBuffer(r->dev, &bci, NULL, &r->buf[i]);
    if (e != VK_SUCCESS) return e;
    VkMemoryRequirements req;
    r->vkGetBufferMemoryRequirements(r->dev, r->buf[i], &req);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t t = 0; t < mp.memoryTypeCount && type == UINT32_MAX; t++)
      if ((req.memoryTypeBits & (1u << t)) && (mp.memoryTypes[t].propertyFlags & want) == want) type = t;
    if (type == UINT32_MAX) return VK_ERROR_FEATURE_NOT_PRESENT;
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = type};
    float *p = NULL;
    if ((e = r->vkAllocateMemory(r->dev, &ai, NULL, &r->mem[i])) != VK_SUCCESS ||
        (e = r->vkBindBufferMemory(r->dev, r->buf[i], r->mem[i], 0)) != VK_SUCCESS ||
        (e = r->vkMapMemory(r->dev, r->mem[i], 0, 16, 0, (void **)&p)) != VK_SUCCESS)
      return e;
    p[0] = 1.0f, p[1] = 2.0f; /* stays mapped until the memory is freed */
  }
  return VK_SUCCESS;
}

/* the pipeline (three storage buffers, a push constant) and its descriptor set */
static VkResult make_pipeline(vk_ref *r) {
  VkShaderModuleCreateInfo mi = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = sizeof spirv, .pCode = spirv};
  VkDescriptorSetLayoutBinding b[3];
  for (uint32_t i = 0; i < 3; i++)
    b[i] = (VkDescriptorSetLayoutBinding){i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  VkDescriptorSetLayoutCreateInfo lci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = 3, .pBindings = b};
  VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
  VkResult e;
  if ((e = r->vkCreateShaderModule(r->dev, &mi, NULL, &r->module)) != VK_SUCCESS ||
      (e = r->vkCreateDescriptorSetLayout(r->dev, &lci, NULL, &r->set_layout)) != VK_SUCCESS)
    return e;
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &r->set_layout,
                                    .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &pcr};
  if ((e = r->vkCreatePipelineLayout(r->dev, &pli, NULL, &r->layout)) != VK_SUCCESS) return e;
  VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                    .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                              .module = r->module,
                                              .pName = "main"},
                                    .layout = r->layout};
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
  VkDescriptorPoolCreateInfo dpi = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1, .poolSizeCount = 1, .pPoolSizes = &ps};
  if ((e = r->vkCreateComputePipelines(r->dev, VK_NULL_HANDLE, 1, &ci, NULL, &r->pipe)) != VK_SUCCESS ||
      (e = r->vkCreateDescriptorPool(r->dev, &dpi, NULL, &r->pool)) != VK_SUCCESS)
    return e;
  VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = r->pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &r->set_layout};
  if ((e = r->vkAllocateDescriptorSets(r->dev, &ai, &r->set)) != VK_SUCCESS) return e;
  VkDescriptorBufferInfo bi[3];
  VkWriteDescriptorSet w[3];
  for (uint32_t i = 0; i < 3; i++) {
    bi[i] = (VkDescriptorBufferInfo){r->buf[i], 0, VK_WHOLE_SIZE};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = r->set,
                                  .dstBinding = i,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &bi[i]};
  }
  r->vkUpdateDescriptorSets(r->dev, 3, w, 0, NULL);
  return VK_SUCCESS;
}

/* instance, device, queue, command buffer and fence */
static VkResult make_device(vk_ref *r, const char *name, int *found) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkResult e = r->vkCreateInstance(&ici, NULL, &r->inst);
  if (e != VK_SUCCESS) return e;
  uint32_t family = 0;
  VkPhysicalDevice pd = find_device(r, name, &family);
  *found = pd != VK_NULL_HANDLE;
  if (!pd) return VK_ERROR_INITIALIZATION_FAILED;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                               .queueFamilyIndex = family,
                               .queueCount = 1,
                               .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = &q};
  if ((e = r->vkCreateDevice(pd, &dci, NULL, &r->dev)) != VK_SUCCESS) return e;
  r->vkGetDeviceQueue(r->dev, family, 0, &r->queue);
  VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = family};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if ((e = r->vkCreateCommandPool(r->dev, &cpi, NULL, &r->cmd_pool)) != VK_SUCCESS ||
      (e = r->vkCreateFence(r->dev, &fci, NULL, &r->fence)) != VK_SUCCESS)
    return e;
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .commandPool = r->cmd_pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  if ((e = r->vkAllocateCommandBuffers(r->dev, &cai, &r->cmd)) != VK_SUCCESS) return e;
  if ((e = make_buffers(r, pd)) != VK_SUCCESS) return e;
  return make_pipeline(r);
}

vk_ref *vk_ref_create(const char *device_name, char *why, size_t whylen) {
  static void *lib;
  if (!lib) lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whylen, "libvulkan.so.1 not found (Debian: libvulkan1)");
    return NULL;
  }
  vk_ref *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
#define VK_REF_LOAD(name)                                           \
  if (!(r->name = (PFN_##name)(void (*)(void))dlsym(lib, #name))) { \
    snprintf(why, whylen, "libvulkan.so.1 has no %s", #name);       \
    free(r);                                                        \
    return NULL;                                                    \
  }
  VK_REF_CALLS(VK_REF_LOAD)
  int found = 0;
  VkResult e = make_device(r, device_name, &found);
  if (e != VK_SUCCESS || vk_ref_run(r, 16) != 0) { /* the first launches warm up */
    if (!found && e != VK_SUCCESS)
      snprintf(why, whylen, "no Vulkan device named '%s' (VkResult %d)", device_name, (int)e);
    else
      snprintf(why, whylen, "Vulkan set-up failed on '%s' (VkResult %d)", device_name, (int)e);
    vk_ref_destroy(r);
    return NULL;
  }
  return r;
}

int vk_ref_run(vk_ref *r, int launches) {
  const int32_t n = 2;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &r->cmd};
  for (int i = 0; i < launches; i++) {
    if (r->vkResetCommandBuffer(r->cmd, 0) != VK_SUCCESS || r->vkBeginCommandBuffer(r->cmd, &bi) != VK_SUCCESS)
      return -1;
    r->vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipe);
    r->vkCmdBindDescriptorSets(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->layout, 0, 1, &r->set, 0, NULL);
    r->vkCmdPushConstants(r->cmd, r->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof n, &n);
    r->vkCmdDispatch(r->cmd, 1, 1, 1);
    if (r->vkEndCommandBuffer(r->cmd) != VK_SUCCESS || r->vkQueueSubmit(r->queue, 1, &si, r->fence) != VK_SUCCESS ||
        r->vkWaitForFences(r->dev, 1, &r->fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS ||
        r->vkResetFences(r->dev, 1, &r->fence) != VK_SUCCESS)
      return -1;
  }
  return 0;
}

void vk_ref_destroy(vk_ref *r) {
  if (!r) return;
  if (r->dev) {
    r->vkDeviceWaitIdle(r->dev);
    if (r->fence) r->vkDestroyFence(r->dev, r->fence, NULL);
    if (r->cmd_pool) r->vkDestroyCommandPool(r->dev, r->cmd_pool, NULL);
    if (r->pool) r->vkDestroyDescriptorPool(r->dev, r->pool, NULL);
    if (r->pipe) r->vkDestroyPipeline(r->dev, r->pipe, NULL);
    if (r->layout) r->vkDestroyPipelineLayout(r->dev, r->layout, NULL);
    if (r->set_layout) r->vkDestroyDescriptorSetLayout(r->dev, r->set_layout, NULL);
    if (r->module) r->vkDestroyShaderModule(r->dev, r->module, NULL);
    for (int i = 0; i < 3; i++) {
      if (r->buf[i]) r->vkDestroyBuffer(r->dev, r->buf[i], NULL);
      if (r->mem[i]) r->vkFreeMemory(r->dev, r->mem[i], NULL);
    }
    r->vkDestroyDevice(r->dev, NULL);
  }
  if (r->inst) r->vkDestroyInstance(r->inst, NULL);
  free(r);
}

#else /* built without the Vulkan headers or glslc */
vk_ref *vk_ref_create(const char *device_name, char *why, size_t whylen) {
  (void)device_name;
  snprintf(why, whylen, "parity-bench was built without the Vulkan headers and glslc (Debian: libvulkan-dev glslc)");
  return NULL;
}
int vk_ref_run(vk_ref *r, int launches) {
  (void)r, (void)launches;
  return -1;
}
void vk_ref_destroy(vk_ref *r) { (void)r; }
#endif
