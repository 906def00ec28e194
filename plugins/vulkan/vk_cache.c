/* vk_cache.c — the VkPipelineCache on disk. The file (parity_support/cachefile.h format) is keyed
 * by vendor, device, driver version and pipelineCacheUUID; before the payload reaches the driver
 * its Vulkan header (length, version, vendor, device, UUID) is checked too. A bad, foreign or
 * stale file is ignored and replaced, never trusted. PARITY_VULKAN_PIPELINE_CACHE=0 disables it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "parity_support/cachefile.h"
#include "vk_internal.h"

#define MAGIC "PARITYVK"
#define MAX_CACHE (256u << 20)

static int enabled(void) { return vkp_knobs.pipeline_cache; }

static uint64_t cache_key(const VkPhysicalDeviceProperties *p) {
  uint64_t h = psup_fnv1a(PSUP_FNV_SEED, &p->vendorID, 4);
  h = psup_fnv1a(h, &p->deviceID, 4);
  h = psup_fnv1a(h, &p->driverVersion, 4);
  return psup_fnv1a(h, p->pipelineCacheUUID, VK_UUID_SIZE);
}

static void cache_path(const parity_plugin_device_t *dev, char *out, size_t n) {
  char dir[900];
  const char *why = psup_cache_dir("vulkan", dir, sizeof dir);
  if (why && strstr(why, "too long")) vkp_log(PARITY_LOG_WARNING, "%s", why);
  if (!dir[0]) {
    out[0] = 0;
    return;
  }
  snprintf(out, n, "%s/pipelines-%016llx.bin", dir, (unsigned long long)cache_key(&dev->slot->props));
}

/* The Vulkan pipeline cache header (VK_PIPELINE_CACHE_HEADER_VERSION_ONE) matches this device. */
static const char *foreign(const parity_plugin_device_t *dev, const uint8_t *data, size_t size) {
  if (size < 32) return "shorter than a pipeline cache header";
  uint32_t len, ver, vendor, device;
  memcpy(&len, data, 4);
  memcpy(&ver, data + 4, 4);
  memcpy(&vendor, data + 8, 4);
  memcpy(&device, data + 12, 4);
  if (len < 32 || len > size) return "bad header length";
  if (ver != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return "unknown header version";
  const VkPhysicalDeviceProperties *p = &dev->slot->props;
  if (vendor != p->vendorID || device != p->deviceID) return "written by another device";
  if (memcmp(data + 16, p->pipelineCacheUUID, VK_UUID_SIZE) != 0) return "another driver's pipelineCacheUUID";
  return NULL;
}

int32_t vkp_pipeline_cache_load(parity_plugin_device_t *dev) {
  char path[1024];
  void *data = NULL;
  size_t size = 0;
  const char *why = "disabled";
  if (enabled()) {
    cache_path(dev, path, sizeof path);
    if (path[0]) data = psup_cache_read(path, MAGIC, cache_key(&dev->slot->props), MAX_CACHE, &size, &why);
    if (data && (why = foreign(dev, data, size)) != NULL) {
      free(data);
      data = NULL;
    }
    if (data)
      vkp_log(PARITY_LOG_DEBUG, "pipeline cache %s: %zu bytes", path, size);
    else if (path[0])
      vkp_log(PARITY_LOG_DEBUG, "pipeline cache %s ignored: %s", path, why);
  }
  VkPipelineCacheCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = size, .pInitialData = data};
  VkResult r = vkCreatePipelineCache(dev->dev, &ci, NULL, &dev->pcache);
  if (r != VK_SUCCESS && data) { /* the driver refused the data: start empty */
    vkp_log(PARITY_LOG_WARNING, "pipeline cache rejected by the driver (%s); starting empty", vkp_result_name(r));
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    r = vkCreatePipelineCache(dev->dev, &ci, NULL, &dev->pcache);
  }
  free(data);
  VKP_CHECK(r, "vkCreatePipelineCache", "");
  return PARITY_STATUS_OK;
}

void vkp_pipeline_cache_save(parity_plugin_device_t *dev) {
  if (!dev->pcache || !dev->pcache_dirty || !enabled()) return;
  char path[1024];
  cache_path(dev, path, sizeof path);
  if (!path[0]) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(dev->dev, dev->pcache, &size, NULL) != VK_SUCCESS || size == 0 || size > MAX_CACHE) return;
  void *data = malloc(size);
  const char *why = NULL;
  if (data && vkGetPipelineCacheData(dev->dev, dev->pcache, &size, data) == VK_SUCCESS &&
      psup_cache_write(path, MAGIC, cache_key(&dev->slot->props), data, size, &why) != 0)
    vkp_log(PARITY_LOG_WARNING, "pipeline cache %s not saved: %s", path, why);
  free(data);
  dev->pcache_dirty = 0;
}
