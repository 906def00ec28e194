/* vk_errors.c — every VkResult: its name and the parity status it maps to. */
#include <stdarg.h>
#include <stdio.h>

#include "parity_support/desc.h"
#include "vk_internal.h"

// clang-format off
#define VKP_RESULTS(X)                                                          \
  X(VK_SUCCESS, OK)                                                             \
  X(VK_NOT_READY, DEVICE_ERROR)                                                 \
  X(VK_TIMEOUT, DEVICE_ERROR)                                                   \
  X(VK_EVENT_SET, DEVICE_ERROR)                                                 \
  X(VK_EVENT_RESET, DEVICE_ERROR)                                               \
  X(VK_INCOMPLETE, INTERNAL)                                                    \
  X(VK_ERROR_OUT_OF_HOST_MEMORY, OUT_OF_MEMORY)                                 \
  X(VK_ERROR_OUT_OF_DEVICE_MEMORY, OUT_OF_MEMORY)                               \
  X(VK_ERROR_INITIALIZATION_FAILED, UNAVAILABLE)                                \
  X(VK_ERROR_DEVICE_LOST, DEVICE_ERROR)                                         \
  X(VK_ERROR_MEMORY_MAP_FAILED, DEVICE_ERROR)                                   \
  X(VK_ERROR_LAYER_NOT_PRESENT, UNAVAILABLE)                                    \
  X(VK_ERROR_EXTENSION_NOT_PRESENT, UNSUPPORTED)                                \
  X(VK_ERROR_FEATURE_NOT_PRESENT, UNSUPPORTED)                                  \
  X(VK_ERROR_INCOMPATIBLE_DRIVER, UNAVAILABLE)                                  \
  X(VK_ERROR_TOO_MANY_OBJECTS, OUT_OF_MEMORY)                                   \
  X(VK_ERROR_FORMAT_NOT_SUPPORTED, UNSUPPORTED)                                 \
  X(VK_ERROR_FRAGMENTED_POOL, OUT_OF_MEMORY)                                    \
  X(VK_ERROR_UNKNOWN, DEVICE_ERROR)                                             \
  X(VK_ERROR_OUT_OF_POOL_MEMORY, OUT_OF_MEMORY)                                 \
  X(VK_ERROR_INVALID_EXTERNAL_HANDLE, INVALID_ARGUMENT)                         \
  X(VK_ERROR_FRAGMENTATION, OUT_OF_MEMORY)                                      \
  X(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS, INVALID_ARGUMENT)                  \
  X(VK_PIPELINE_COMPILE_REQUIRED, INTERNAL)                                     \
  X(VK_ERROR_SURFACE_LOST_KHR, DEVICE_ERROR)                                    \
  X(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR, DEVICE_ERROR)                            \
  X(VK_SUBOPTIMAL_KHR, DEVICE_ERROR)                                            \
  X(VK_ERROR_OUT_OF_DATE_KHR, DEVICE_ERROR)                                     \
  X(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR, DEVICE_ERROR)                            \
  X(VK_ERROR_VALIDATION_FAILED_EXT, INTERNAL)                                   \
  X(VK_ERROR_INVALID_SHADER_NV, INTERNAL)                                       \
  X(VK_ERROR_INVALID_DRM_FORMAT_MODIFIER_PLANE_LAYOUT_EXT, INTERNAL)            \
  X(VK_ERROR_NOT_PERMITTED_KHR, UNAVAILABLE)                                    \
  X(VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT, DEVICE_ERROR)                 \
  X(VK_THREAD_IDLE_KHR, DEVICE_ERROR)                                           \
  X(VK_THREAD_DONE_KHR, DEVICE_ERROR)                                           \
  X(VK_OPERATION_DEFERRED_KHR, DEVICE_ERROR)                                    \
  X(VK_OPERATION_NOT_DEFERRED_KHR, DEVICE_ERROR)                                \
  X(VK_ERROR_COMPRESSION_EXHAUSTED_EXT, OUT_OF_MEMORY)
// clang-format on

const char *vkp_result_name(VkResult r) {
  switch (r) {
#define X(name, st) \
  case name: return #name;
    VKP_RESULTS(X)
#undef X
    default: return NULL;
  }
}

int32_t vkp_result_status(VkResult r) {
  switch (r) {
#define X(name, st) \
  case name: return PARITY_STATUS_##st;
    VKP_RESULTS(X)
#undef X
    default: return r < 0 ? PARITY_STATUS_DEVICE_ERROR : PARITY_STATUS_INTERNAL;
  }
}

int32_t vkp_vk_fail(VkResult r, const char *call, const char *what) {
  return psup_kit_driver_fail(&vkp_kit, vkp_result_status(r), call, vkp_result_name(r), "VkResult", r, what);
}
