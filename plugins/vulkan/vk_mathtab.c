/* vk_mathtab.c — the software math library's coefficient tables (shaders/pmath*.glsl), uploaded
 * once per device into the buffer every kernel sees at binding PM_TABLE_BINDING. The words come
 * from the same source the shaders are compiled from, read here as C (pmath_c.h), so the GPU and
 * the library's CPU tests use identical tables. */
#include <string.h>

#include "vk_internal.h"
#include "pmath_c.h"

#define VKP_TABLE_SIZE(name, words) \
  _Static_assert(sizeof name / sizeof name[0] == (words), #name " has the size PM_TABLES says");
PM_TABLES(VKP_TABLE_SIZE)
#undef VKP_TABLE_SIZE
_Static_assert(PM_TABLE_BINDING == VKP_MAX_BINDINGS - 1, "the tables take the last binding");

int32_t vkp_mathtab_create(parity_plugin_device_t *dev) {
  uint32_t words[PM_TABLE_WORDS];
  size_t off = 0;
#define VKP_TABLE_COPY(name, n)                                                                             \
  if (off != (size_t)name##_OFF)                                                                            \
    return vkp_fail(PARITY_STATUS_INTERNAL, "math table " #name " at word %zu, the shaders expect %d", off, \
                    name##_OFF);                                                                            \
  memcpy(words + off, name, sizeof name);                                                                   \
  off += (n);
  PM_TABLES(VKP_TABLE_COPY)
#undef VKP_TABLE_COPY
  int32_t st = vkp_buffer_alloc(dev, sizeof words, &dev->mathtab);
  if (st == PARITY_STATUS_OK) st = vkp_buffer_write(dev, dev->mathtab, 0, words, sizeof words);
  return st;
}
