/* vk_plugin.c — the Vulkan plugin's function table: instance and device enumeration at init,
 * the optional Khronos validation layer, and its host kit (parity_support/gpu_kit.h: device slots
 * and info, supports(), the kernel entries and the buffer-argument checks, driven by the families
 * table below). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/env.h"
#include "vk_internal.h"

VkInstance vkp_instance;

#define VKP_MAX_DEVICES 16
static vkp_slot_t slots[VKP_MAX_DEVICES]; /* filled at init (single-threaded), read-only afterwards */

const vkp_slot_t *vkp_slot(uint32_t index) { return psup_kit_slot_at(&vkp_kit, index); }

/* ---- validation layer (PARITY_VULKAN_VALIDATION=1, =sync with synchronization checks, =gpu with
 * GPU-assisted validation) -------------------------------------------------------------------- */
static VkDebugUtilsMessengerEXT messenger;
static _Atomic int validation_pending;
static char validation_msg[1024];

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                                    VkDebugUtilsMessageTypeFlagsEXT type,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)type, (void)user;
  if (!(sev & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)))
    return VK_FALSE;
  const char *m = data && data->pMessage ? data->pMessage : "(no message)";
  vkp_log(PARITY_LOG_WARNING, "validation: %s", m);
  int expected = 0;
  if (atomic_compare_exchange_strong(&validation_pending, &expected, 2)) {
    vkp_condense_validation(data ? data->pMessageIdName : NULL, m, validation_msg, sizeof validation_msg);
    atomic_store(&validation_pending, 1);
  }
  return VK_FALSE;
}

const char *vkp_take_validation_error(void) {
  static _Thread_local char copy[1024];
  int expected = 1;
  if (!atomic_compare_exchange_strong(&validation_pending, &expected, 0)) return NULL;
  snprintf(copy, sizeof copy, "%s", validation_msg);
  return copy;
}

static int layer_present(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkLayerProperties *p = calloc(n, sizeof *p);
  int found = 0;
  if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].layerName, name) == 0;
  free(p);
  return found;
}

static int32_t create_instance(void) {
  int validate = vkp_knobs.validation != 0, sync = vkp_knobs.validation == 2, gpu = vkp_knobs.validation == 3;
  const char *layer = "VK_LAYER_KHRONOS_validation";
  if (validate && !layer_present(layer))
    return vkp_fail(PARITY_STATUS_UNAVAILABLE,
                    "PARITY_VULKAN_VALIDATION is set but %s is not installed "
                    "(Debian: apt install vulkan-validationlayers)",
                    layer);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "parity",
                           .pEngineName = "parity",
                           .apiVersion = VK_API_VERSION_1_2};
  /* sync: synchronization validation; gpu: GPU-assisted validation (the layer instruments every
   * shader: out-of-bounds descriptor and buffer accesses are reported from the device) */
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeatureEnableEXT gpu_enables[] = {VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT,
                                                VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT_EXT};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .enabledValidationFeatureCount = gpu ? 2u : 1u,
                                      .pEnabledValidationFeatures = gpu ? gpu_enables : enables};
  VkDebugUtilsMessengerCreateInfoEXT dbg = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
                                            .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                                               VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                                            .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                                           VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                                           VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                                            .pfnUserCallback = on_validation,
                                            .pNext = sync || gpu ? &features : NULL};
  const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = validate ? 1u : 0u,
                             .ppEnabledLayerNames = &layer,
                             .enabledExtensionCount = validate ? 1u : 0u,
                             .ppEnabledExtensionNames = exts,
                             .pNext = validate ? &dbg : NULL};
  VkResult r = vkCreateInstance(&ci, NULL, &vkp_instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    return vkp_fail(PARITY_STATUS_UNAVAILABLE,
                    "no Vulkan device found; install mesa-vulkan-drivers or a GPU "
                    "driver (vkCreateInstance: %s)",
                    vkp_result_name(r));
  VKP_CHECK(r, "vkCreateInstance", "Vulkan 1.2 instance");
  if (validate) {
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(vkp_instance, "vkCreateDebugUtilsMessengerEXT");
    dbg.pNext = NULL; /* the validation features chain belongs to the instance only */
    if (create) create(vkp_instance, &dbg, NULL, &messenger);
    vkp_log(PARITY_LOG_INFO, "validation layer on%s",
            sync  ? " (synchronization validation)"
            : gpu ? " (GPU-assisted validation)"
                  : "");
  }
  return PARITY_STATUS_OK;
}

/* PARITY_VULKAN_FP64: which float kernels use float64 (read once at init, by vk_knobs.c).
 *   auto (default) f64 tensors on f64 kernels where the device has shaderFloat64; f32, f16 and
 *                  bf16 on the float32 library everywhere
 *   on             f32, f16 and bf16 on the software double library too (the path before the
 *                  float32 library; kept for comparison), where the device has float64
 *   off            no float64 at all: the device runs as one without it (f64 unsupported) */

const char *vkp_f64_missing(const vkp_slot_t *s) {
  if (s->has_f64) return NULL;
  return s->hw_f64 ? "float64 (turned off by PARITY_VULKAN_FP64=off)"
                   : "shaderFloat64 and shaderSignedZeroInfNanPreserveFloat64";
}

/* The queue family parity uses on pd: a compute queue, preferably without graphics (async
 * compute); UINT32_MAX when there is none. */
static uint32_t compute_family(VkPhysicalDevice pd) {
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties qf[32];
  if (nq > 32) nq = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nq; i++) /* prefer a compute queue without graphics (async compute) */
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        (family == UINT32_MAX || !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
      family = i;
  return family;
}

/* The device information record and capability notes of a slot whose features are filled in;
 * max_alloc: maxMemoryAllocationSize (0: unknown, the largest device-local heap then). */
static void fill_info(vkp_slot_t *s, VkPhysicalDevice pd, uint64_t max_alloc) {
  const VkPhysicalDeviceProperties *props = &s->props;
  parity_device_info_t *info = &s->kit.info;
  switch (props->deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU: info->type = PARITY_DEVICE_TYPE_SOFTWARE_GPU; break;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: info->type = PARITY_DEVICE_TYPE_GPU; break;
    default: info->type = PARITY_DEVICE_TYPE_OTHER;
  }
  snprintf(info->name, sizeof info->name, "%.127s", props->deviceName);
  snprintf(info->driver, sizeof info->driver, "Vulkan %u.%u.%u, driver 0x%x", VK_API_VERSION_MAJOR(props->apiVersion),
           VK_API_VERSION_MINOR(props->apiVersion), VK_API_VERSION_PATCH(props->apiVersion), props->driverVersion);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  uint64_t best = 0;
  for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
    if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mp.memoryHeaps[i].size > best)
      best = mp.memoryHeaps[i].size;
  info->memory_bytes = best;
  info->max_buffer_bytes = max_alloc ? max_alloc : best;
  info->dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32) | PARITY_DTYPE_BIT(PARITY_DTYPE_I32);
  if (s->has_16bit) info->dtype_mask |= PARITY_DTYPE_BIT(PARITY_DTYPE_F16) | PARITY_DTYPE_BIT(PARITY_DTYPE_BF16);
  if (s->has_f64) info->dtype_mask |= PARITY_DTYPE_BIT(PARITY_DTYPE_F64);
  if (s->has_i64) info->dtype_mask |= PARITY_DTYPE_BIT(PARITY_DTYPE_I64);
  if (s->has_8bit) info->dtype_mask |= PARITY_DTYPE_BIT(PARITY_DTYPE_BOOL);
  info->flags = PARITY_DEVICE_FLAG_DETERMINISTIC; /* no atomics, fixed trees, fixed geometry */
  /* every floating op has an f64 kernel, transcendentals included (software double, pmath) */
  if (s->has_f64) info->flags |= PARITY_DEVICE_FLAG_FLOAT64;
  /* lavapipe keeps f32 denormals through add/mul (measured); elsewhere the default float
   * controls are the driver's choice */
  info->denormals = s->cpu_like ? PARITY_DENORMALS_PRESERVED : PARITY_DENORMALS_UNKNOWN;
  snprintf(info->math, sizeof info->math, "f32 f16 bf16: %s; f64: %s",
           s->dmath ? "software double, rounded once" : "float32 library (32-bit arithmetic only)",
           s->has_f64 ? "software double" : "none (no float64)");
  psup_kit_slot_ready(&vkp_kit, &s->kit);
  s->kit.caps.missing[PARITY_DTYPE_F64] = vkp_f64_missing(s);
  s->kit.caps.missing[PARITY_DTYPE_I64] = "shaderInt64";
  s->kit.caps.missing[PARITY_DTYPE_F16] = "storageBuffer16BitAccess and shaderInt16";
  s->kit.caps.missing[PARITY_DTYPE_BF16] = "storageBuffer16BitAccess and shaderInt16";
  s->kit.caps.missing[PARITY_DTYPE_BOOL] = "storageBuffer8BitAccess and shaderInt8";
}

static void add_device(VkPhysicalDevice pd) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  if (props.apiVersion < VK_API_VERSION_1_2) {
    vkp_log(PARITY_LOG_WARNING, "skipping '%s': Vulkan %u.%u, parity needs 1.2", props.deviceName,
            VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion));
    return;
  }
  uint32_t family = compute_family(pd);
  if (family == UINT32_MAX) {
    vkp_log(PARITY_LOG_WARNING, "skipping '%s': no compute queue", props.deviceName);
    return;
  }
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                          .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  VkPhysicalDeviceFloatControlsProperties fc = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                           .pNext = &fc};
  VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
                                               .pNext = &sg};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  if (props.limits.maxPerStageDescriptorStorageBuffers < VKP_MAX_BINDINGS) {
    vkp_log(PARITY_LOG_WARNING, "skipping '%s': %u storage buffers per stage, parity binds %d", props.deviceName,
            props.limits.maxPerStageDescriptorStorageBuffers, VKP_MAX_BINDINGS);
    return;
  }
  if (!f12.timelineSemaphore) {
    vkp_log(PARITY_LOG_WARNING, "skipping '%s': no timeline semaphores", props.deviceName);
    return;
  }
  vkp_slot_t *s = psup_kit_slot_add(&vkp_kit, props.deviceName);
  if (!s) return;
  s->phys = pd;
  s->props = props;
  s->queue_family = family;
  /* f64 kernels compute transcendentals in software double and need 64-bit integers for nothing;
   * every other floating kernel uses 32-bit arithmetic only (the float32 library) */
  s->hw_f64 = f2.features.shaderFloat64 && fc.shaderSignedZeroInfNanPreserveFloat64;
  s->has_f64 = s->hw_f64 && vkp_knobs.fp64 != VKP_FP64_OFF;
  s->dmath = s->has_f64 && vkp_knobs.fp64 == VKP_FP64_ON;
  s->has_i64 = f2.features.shaderInt64;
  /* the shaders convert through 16- and 8-bit integer types, which need shaderInt16/shaderInt8 */
  s->has_16bit = f11.storageBuffer16BitAccess && f2.features.shaderInt16;
  s->has_8bit = f12.storageBuffer8BitAccess && f12.shaderInt8;
  s->nan_preserve = fc.shaderSignedZeroInfNanPreserveFloat32;
  s->cpu_like = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  uint64_t range = props.limits.maxStorageBufferRange;
  s->max_range = range < (1ull << 31) ? range : (1ull << 31);
  s->min_align = (uint32_t)props.limits.minStorageBufferOffsetAlignment;
  if (s->min_align < 1) s->min_align = 1;
  if (s->min_align < vkp_knobs.min_align) s->min_align = vkp_knobs.min_align;
  s->max_allocs = props.limits.maxMemoryAllocationCount;
  if (vkp_knobs.max_allocs && vkp_knobs.max_allocs < s->max_allocs) s->max_allocs = vkp_knobs.max_allocs;
  for (int i = 0; i < 3; i++) s->max_groups[i] = props.limits.maxComputeWorkGroupCount[i];
  s->max_local = props.limits.maxComputeWorkGroupInvocations;
  s->subgroup_size = sg.subgroupSize;
  s->shared_bytes = props.limits.maxComputeSharedMemorySize;

  fill_info(s, pd, m3.maxMemoryAllocationSize);
  const parity_device_info_t *info = &s->kit.info;
  vkp_log(PARITY_LOG_DEBUG,
          "device %u: %s (%s), f64 %s%s, f32/f16/bf16 math: %s, i64 %s, 16-bit %s, "
          "8-bit %s, subgroup %u, max range %llu",
          vkp_kit.slot_count - 1, info->name, info->driver, s->has_f64 ? "yes" : "no",
          s->hw_f64 && !s->has_f64 ? " (PARITY_VULKAN_FP64=off)" : "", s->dmath ? "software double" : "float32 library",
          s->has_i64 ? "yes" : "no", s->has_16bit ? "yes" : "no", s->has_8bit ? "yes" : "no", s->subgroup_size,
          (unsigned long long)s->max_range);
}

static void vkp_shutdown(void) {
  if (vkp_instance) {
    if (messenger) {
      PFN_vkDestroyDebugUtilsMessengerEXT destroy =
          (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(vkp_instance, "vkDestroyDebugUtilsMessengerEXT");
      if (destroy) destroy(vkp_instance, messenger, NULL);
      messenger = VK_NULL_HANDLE;
    }
    vkDestroyInstance(vkp_instance, NULL);
  }
  vkp_instance = VK_NULL_HANDLE;
  psup_kit_slots_reset(&vkp_kit);
}

static int32_t vkp_init(void) {
  psup_kit_slots_reset(&vkp_kit);
  int32_t st = vkp_read_knobs();
  if (st != PARITY_STATUS_OK) return st;
  st = create_instance();
  if (st != PARITY_STATUS_OK) return st;
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(vkp_instance, &n, NULL);
  if (r != VK_SUCCESS || n == 0) {
    vkp_shutdown();
    return vkp_fail(PARITY_STATUS_UNAVAILABLE, "no Vulkan device found; install mesa-vulkan-drivers or a GPU driver");
  }
  VkPhysicalDevice pds[VKP_MAX_DEVICES];
  if (n > VKP_MAX_DEVICES) n = VKP_MAX_DEVICES;
  r = vkEnumeratePhysicalDevices(vkp_instance, &n, pds);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    vkp_shutdown();
    return vkp_vk_fail(r, "vkEnumeratePhysicalDevices", "listing devices");
  }
  for (uint32_t i = 0; i < n; i++) add_device(pds[i]);
  if (vkp_kit.slot_count == 0) {
    vkp_shutdown();
    return vkp_fail(PARITY_STATUS_UNAVAILABLE,
                    "%u Vulkan device(s) but none usable (parity needs Vulkan 1.2, "
                    "a compute queue and timeline semaphores)",
                    n);
  }
  return PARITY_STATUS_OK;
}

static const psup_kit_slot_t *slot_of(const parity_plugin_device_t *dev) { return &dev->slot->kit; }
static uint64_t buffer_size(const parity_plugin_buffer_t *b) { return b->size; }
static int32_t check_window(parity_plugin_device_t *dev, const parity_op_desc_t *d) { return vkp_check_window(dev, d); }

psup_kit_t vkp_kit = {
    .backend = "vulkan",
    PSUP_KIT_SLOTS(slots),
    .slot_of = slot_of,
    PSUP_KIT_DEVICES(vkp),
    .check = check_window, /* descriptor ranges every family binds */
    PSUP_KIT_FAMILIES(vkp, vkp_elementwise_supports, vkp_reduce_supports, vkp_matmul_supports, vkp_conv2d_supports,
                      vkp_softmax_supports),
    .buffers = PSUP_KIT_TRANSFERS(vkp, buffer_size),
    .plans = {vkp_plan_begin, vkp_plan_end, vkp_plan_run, vkp_plan_release}, /* vk_plan.c */
};

PSUP_KIT_ENTRIES(vkp_kit)
PSUP_KIT_PLAN_ENTRIES(vkp_kit)
PSUP_KIT_API_PLANS(vkp_api, vkp);

const parity_plugin_api_t *vkp_plugin_api(void) { return &vkp_api; }
