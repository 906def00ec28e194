/* vk_errors.c — every VkResult: its name and the parity status it maps to; a validation layer's
 * message made short enough for a case report. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* "<message id>: <what>" from a validation layer's message: without the object list before the
 * last "| ", the handles' addresses ("(0x55b5ba59d2e0)") and the spec's words after "The Vulkan
 * spec states:"; what stays (for GPU-assisted validation: the access, the descriptor's size, the
 * pipeline's kernel name, the instruction index and the invocation) fits a case report, and is the
 * same from run to run. The plugin's log keeps the whole message. */
void vkp_condense_validation(const char *id, const char *msg, char *out, size_t n) {
  if (n == 0) return;
  const char *body = msg ? msg : "", *bar;
  while ((bar = strstr(body, "| "))) body = bar + 2;
  const char *end = strstr(body, " The Vulkan spec states:");
  if (!end) end = body + strlen(body);
  size_t k = 0;
  if (id && *id) {
    int w = snprintf(out, n, "%s: ", id);
    k = w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
  }
  for (const char *c = body; c < end && k + 1 < n; c++) {
    if (c[0] == '(' && c[1] == '0' && c[2] == 'x') { /* a handle's address: dropped */
      const char *q = c + 3;
      while (q < end && isxdigit((unsigned char)*q)) q++;
      if (q < end && *q == ')' && q > c + 3) {
        if (k > 0 && out[k - 1] == ' ') k--; /* "buffer (0x..)." -> "buffer." */
        c = q;
        continue;
      }
    }
    if (*c == ' ' && k > 0 && out[k - 1] == ' ') continue;
    out[k++] = *c;
  }
  while (k > 0 && out[k - 1] == ' ') k--;
  out[k] = 0;
}
