/* vk_window.h — a tensor's binding window: the arithmetic alone, without Vulkan (vk_window.c;
 * vk_dispatch.c binds the result, tests/vulkan/window_test.c checks it). */
#ifndef VK_WINDOW_H
#define VK_WINDOW_H
#include <stdint.h>

typedef struct vkp_window {
  uint64_t off;   /* the descriptor's offset in the buffer: aligned down to `align` */
  uint64_t range; /* its size in bytes: up to the tensor's last byte, never past the buffer */
  int64_t base;   /* the tensor's element 0 as an element index from `off` */
} vkp_window_t;

/* The window of a tensor whose bytes are [lo, hi) of a buffer of `alloc` bytes (psup_byte_extent;
 * hi <= lo: empty), element 0 at `offset_bytes`, elements of `esize` bytes; `align` the
 * descriptor offset alignment (a multiple of esize), `max_range` the most one binding may span. */
vkp_window_t vkp_window(int64_t lo, int64_t hi, int64_t offset_bytes, uint32_t esize, uint64_t align, uint64_t alloc,
                        uint64_t max_range);
#endif
