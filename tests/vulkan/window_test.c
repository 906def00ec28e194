/* A tensor's binding window (plugins/vulkan/vk_window.c, compiled into this test) ends at the
 * tensor's last byte, not at its buffer's end: GPU-assisted validation checks each shader access
 * against the window, so a window reaching past the tensor would hide a read or write past it
 * (the guard bytes parity-conform places after every operand, or the next tensor). */
#include <criterion/criterion.h>

#include "../../plugins/vulkan/vk_window.c"

/* lavapipe's minStorageBufferOffsetAlignment; most GPUs ask for 16 to 256 */
enum { ALIGN = 64 };
static const uint64_t MAX_RANGE = 1ull << 31;

/* the bytes [lo, hi) of a strided tensor, as psup_byte_extent gives them */
static void extent(const int64_t *shape, const int64_t *strides, int rank, int64_t off_bytes, int es, int64_t *lo,
                   int64_t *hi) {
  int64_t l = 0, h = 0;
  for (int i = 0; i < rank; i++) {
    int64_t span = (shape[i] - 1) * strides[i];
    if (span < 0)
      l += span;
    else
      h += span;
  }
  *lo = l * es + off_bytes;
  *hi = (h + 1) * es + off_bytes;
}

/* The window covers every byte of the tensor, starts at most ALIGN - 1 bytes before its first one
 * on an aligned offset, ends exactly at its last one, and addresses element 0 through base. */
static void check_tight(const int64_t *shape, const int64_t *strides, int rank, int64_t off_bytes, int es,
                        uint64_t alloc) {
  int64_t lo, hi;
  extent(shape, strides, rank, off_bytes, es, &lo, &hi);
  vkp_window_t w = vkp_window(lo, hi, off_bytes, (uint32_t)es, ALIGN, alloc, MAX_RANGE);
  cr_assert_eq(w.off % ALIGN, 0u, "offset %llu not aligned", (unsigned long long)w.off);
  cr_assert(w.off <= (uint64_t)lo && (uint64_t)lo - w.off < ALIGN, "window starts at %llu for a tensor at %lld",
            (unsigned long long)w.off, (long long)lo);
  cr_assert_eq(w.off + w.range, (uint64_t)hi,
               "the window [%llu, %llu) must end at the tensor's last byte (%lld) in a buffer of %llu bytes",
               (unsigned long long)w.off, (unsigned long long)(w.off + w.range), (long long)hi,
               (unsigned long long)alloc);
  cr_assert_eq((int64_t)w.off + w.base * es, off_bytes, "base %lld does not address element 0", (long long)w.base);
}

Test(vk_window, ends_at_the_tensors_last_byte) {
  /* contiguous, in a buffer with guard bytes after it */
  check_tight((int64_t[]){3, 5}, (int64_t[]){5, 1}, 2, 64, 4, 4096);
  /* an offset that is not aligned: the window starts before the tensor, never ends after it */
  check_tight((int64_t[]){7}, (int64_t[]){1}, 1, 64 + 12, 4, 4096);
  /* transposed, broadcast (stride 0), and a negative stride (element 0 is not the first byte) */
  check_tight((int64_t[]){4, 3}, (int64_t[]){1, 4}, 2, 128, 8, 1 << 20);
  check_tight((int64_t[]){4, 6}, (int64_t[]){0, 1}, 2, 64, 2, 4096);
  check_tight((int64_t[]){5}, (int64_t[]){-1}, 1, 64 + 4 * 4, 4, 4096);
  /* one byte per element (bool), a tensor in the middle of a large buffer */
  check_tight((int64_t[]){33}, (int64_t[]){1}, 1, 1000, 1, 1 << 24);
  /* the tensor ends its buffer */
  check_tight((int64_t[]){16}, (int64_t[]){1}, 1, 64, 4, 64 + 64);
}

Test(vk_window, empty_tensor_gets_one_byte_inside_its_buffer) {
  /* an empty tensor sitting at the very end of its buffer: a descriptor must start before the end
   * and span at least one byte */
  vkp_window_t w = vkp_window(0, 0, 256, 4, ALIGN, 256, MAX_RANGE);
  cr_assert(w.off < 256 && w.range >= 1 && w.off + w.range <= 256);
}

Test(vk_window, capped_at_the_devices_range) {
  int64_t lo = 64, hi = 64 + (int64_t)(3ull << 30);
  vkp_window_t w = vkp_window(lo, hi, lo, 1, ALIGN, (uint64_t)hi + 64, MAX_RANGE);
  cr_assert_eq(w.range, MAX_RANGE);
  cr_assert_eq(w.off, 64u);
}
