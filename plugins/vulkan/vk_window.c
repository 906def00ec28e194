/* vk_window.c — a tensor's binding window (vk_window.h). */
#include "vk_window.h"

vkp_window_t vkp_window(int64_t lo, int64_t hi, int64_t offset_bytes, uint32_t esize, uint64_t align, uint64_t alloc,
                        uint64_t max_range) {
  vkp_window_t w;
  /* empty: any window, but one inside the buffer (an empty tensor may sit at its very end, and a
   * descriptor must start before the end and cover at least one byte) */
  if (hi <= lo) lo = 0;
  w.off = (uint64_t)lo / align * align;
  /* the tensor's bytes only, not the rest of its buffer: a shader's access past the tensor is
   * then outside its descriptor, where GPU-assisted validation (PARITY_VULKAN_VALIDATION=gpu) and
   * robust buffer access see it */
  uint64_t avail = alloc > w.off ? alloc - w.off : 0, span = hi > lo ? (uint64_t)hi - w.off : 1;
  if (span > avail) span = avail;
  w.range = span < max_range ? span : max_range;
  w.base = (offset_bytes - (int64_t)w.off) / (int64_t)esize;
  return w;
}
