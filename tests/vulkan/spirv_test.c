/* spirv_test.c — the Vulkan plugin's embedded SPIR-V, read as the driver would: every variant a
 * device without shaderFloat64 may run (every f32, f16, bf16, integer, bool and dtype-free
 * variant, and casts that do not involve f64) declares no Float64 capability and no 64-bit float
 * type. Only f64 variants, casts from or to f64, the software double path's "_dmath" twins and the
 * double fma probe may use double. Also: every "_dmath" twin has its float32-library variant. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "vk_shaders.h"

enum { OP_CAPABILITY = 17, OP_TYPE_FLOAT = 22, CAP_FLOAT64 = 10 };

/* 1 when the module declares Float64 or a 64-bit OpTypeFloat; *bad names the first finding */
static int uses_double(const vk_spirv_t *m, const char **what) {
  const size_t words = vk_spirv_words(m);
  cr_assert(words > 5 && m->code[0] == 0x07230203u, "%s: not SPIR-V", m->name);
  for (size_t i = 5; i < words;) {
    uint32_t n = m->code[i] >> 16, op = m->code[i] & 0xffffu;
    cr_assert(n > 0 && i + n <= words, "%s: malformed instruction at word %zu", m->name, i);
    if (op == OP_CAPABILITY && n >= 2 && m->code[i + 1] == CAP_FLOAT64) {
      *what = "OpCapability Float64";
      return 1;
    }
    if (op == OP_TYPE_FLOAT && n >= 3 && m->code[i + 2] == 64) {
      *what = "OpTypeFloat 64";
      return 1;
    }
    i += n;
  }
  return 0;
}

/* variants allowed to use double */
static int double_allowed(const char *name) {
  size_t n = strlen(name);
  return strstr(name, "f64") != NULL || (n > 6 && !strcmp(name + n - 6, "_dmath")) || !strcmp(name, "probe_fma");
}

Test(vulkan_spirv, only_f64_and_double_path_variants_use_double) {
  int checked = 0, allowed_with_double = 0;
  for (int i = 0; i < VK_SPV_COUNT; i++) {
    const char *what = NULL;
    int d = uses_double(&vk_spirv[i], &what);
    if (double_allowed(vk_spirv[i].name)) {
      allowed_with_double += d;
      continue;
    }
    cr_expect(!d, "%s declares %s: a device without shaderFloat64 could not run it", vk_spirv[i].name, what);
    checked++;
  }
  cr_expect(checked > 200, "only %d float64-free variants checked", checked);
  /* the scan sees double where it is: the f64 kernels and the software double path use it */
  cr_expect(allowed_with_double > 100, "only %d f64/_dmath variants declare double: the scan misses it",
            allowed_with_double);
}

Test(vulkan_spirv, every_dmath_twin_has_its_float32_variant) {
  int twins = 0;
  for (int i = 0; i < VK_SPV_COUNT; i++) {
    const char *name = vk_spirv[i].name;
    size_t n = strlen(name);
    if (n <= 6 || strcmp(name + n - 6, "_dmath")) continue;
    char plain[96];
    snprintf(plain, sizeof plain, "%.*s", (int)(n - 6), name);
    int found = 0;
    for (int j = 0; j < VK_SPV_COUNT && !found; j++) found = !strcmp(vk_spirv[j].name, plain);
    cr_expect(found, "%s has no float32-library variant %s", name, plain);
    twins++;
  }
  cr_expect(twins > 50, "only %d _dmath variants", twins);
}
