/* vk_knobs.c — the Vulkan plugin's environment variables, read and checked once at init
 * (parity_support/env.h): a value that does not parse makes the plugin unavailable with a message
 * naming the variable, the value as written and what is accepted; none is ignored. */
#include "parity_support/env.h"
#include "vk_internal.h"

vkp_knobs_t vkp_knobs;

int32_t vkp_read_knobs(void) {
  static const char *const fp64[] = {"auto", "on", "off", NULL};
  static const char *const validation[] = {"0", "1", "sync", "gpu", NULL};
  static const char *const matmul[] = {"auto", "simple", "blocked", "tiled", NULL};
  static const char *const lanes[] = {"natural", "reverse", "shuffle", NULL};
  static const char *const unsafe[] = {"0", "1", "war", NULL};
  static const char *const submit[] = {"auto", "own", "batch", NULL};
  vkp_knobs_t k;
  long long groups, rows, fold, seed, fail_at, align, btypes, rtypes, allocs;
  char msg[200];
  if (psup_env_choice("PARITY_VULKAN_FP64", fp64, VKP_FP64_AUTO, &k.fp64, msg, sizeof msg) != 0 ||
      psup_env_choice("PARITY_VULKAN_VALIDATION", validation, 0, &k.validation, msg, sizeof msg) != 0 ||
      psup_env_flag("PARITY_VULKAN_PIPELINE_CACHE", 1, &k.pipeline_cache, msg, sizeof msg) != 0 ||
      psup_env_choice("PARITY_VULKAN_MATMUL", matmul, VKP_MM_AUTO, &k.matmul, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_MAX_GROUPS", 0, 1ll << 30, 0, &groups, msg, sizeof msg) != 0 ||
      psup_env_choice("PARITY_VULKAN_UNSAFE_NO_BARRIERS", unsafe, 0, &k.unsafe_no_barriers, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_SOFTMAX_ROWS", 0, 1 << 20, 0, &rows, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_FOLD_GROUPS", 0, 65535, 0, &fold, msg, sizeof msg) != 0 ||
      psup_env_choice("PARITY_VULKAN_LANE_ORDER", lanes, 0, &k.lane_order, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_LANE_SEED", 0, 1 << 20, 1, &seed, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_PLAN_FAIL_AT", 0, 1 << 30, 0, &fail_at, msg, sizeof msg) != 0 ||
      psup_env_choice("PARITY_VULKAN_PLAN_SUBMIT", submit, 0, &k.plan_submit, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_MIN_ALIGN", 0, 256, 0, &align, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_MAX_ALLOCATIONS", 0, 0xffffffffll, 0, &allocs, msg, sizeof msg) != 0 ||
      psup_env_flag("PARITY_VULKAN_SUBALLOC", 1, &k.suballoc, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_BUFFER_MEMORY_TYPES", 0, 0xffffffffll, 0xffffffffll, &btypes, msg, sizeof msg) != 0 ||
      psup_env_int("PARITY_VULKAN_RING_MEMORY_TYPES", 0, 0xffffffffll, 0xffffffffll, &rtypes, msg, sizeof msg) != 0 ||
      psup_kit_scratch_mode(&vkp_kit, &k.scratch, msg, sizeof msg) != 0)
    return vkp_fail(PARITY_STATUS_INVALID_ARGUMENT, "%s", msg);
  /* the Vulkan spec's limits for minStorageBufferOffsetAlignment: a power of two, at most 256 */
  if (align & (align - 1))
    return vkp_fail(PARITY_STATUS_INVALID_ARGUMENT,
                    "PARITY_VULKAN_MIN_ALIGN='%lld': expected 0 (the device's) or a power of two up to 256", align);
  k.min_align = (uint32_t)align;
  k.max_allocs = (uint32_t)allocs;
  k.buffer_types = (uint32_t)btypes;
  k.ring_types = (uint32_t)rtypes;
  k.max_groups = (uint32_t)groups;
  k.softmax_rows = (uint32_t)rows;
  k.fold_groups = (uint32_t)fold;
  k.plan_fail_at = (uint32_t)fail_at;
  /* specialization constant 5 of the shared-memory kernels: 0 natural, 1 reverse, 2 + seed a
   * seeded shuffle */
  if (k.lane_order == 2) k.lane_order = 2 + (int)seed;
  vkp_knobs = k;
  return PARITY_STATUS_OK;
}
