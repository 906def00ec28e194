/* PARITY_VULKAN_FP64: off makes the device one without float64 (the profile of Apple GPUs through
 * MoltenVK, Intel Arc and mobile GPUs): f64 is reported missing with the reason, and f32, f16 and
 * bf16 math, which runs on the float32 library in every mode, keeps working; a value other than
 * auto, on or off is refused with the variable named, and so is a bad value of any other knob. */
#define _XOPEN_SOURCE 700 /* setenv, popen */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "vk_test.h"

static parity_device_info_t info_of(parity_device_t *dev) {
  parity_device_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  return info;
}

/* y = op(x) for one element in dtype dt; the status, *out the result */
static parity_status_t unary1(parity_device_t *dev, int32_t op, int32_t dt, double x, double *out) {
  int64_t shape[1] = {1};
  pt_tensor a = pt_tensor_new(dev, dt, 1, shape, &x), y = pt_tensor_new(dev, dt, 1, shape, NULL);
  const pt_tensor *in[] = {&a}, *o[] = {&y};
  parity_status_t st = pt_run(dev, op, PARITY_DIRECTION_FORWARD, in, 1, o, 1, NULL);
  if (st == PARITY_STATUS_OK) pt_tensor_read(&y, out);
  return st;
}

Test(vk_fp64_modes, off_reports_no_float64_and_keeps_every_other_float_dtype, .timeout = 300) {
  setenv("PARITY_VULKAN_FP64", "off", 1);
  parity_device_t *dev = vt_device();
  parity_device_info_t info = info_of(dev);
  cr_assert_eq(info.flags & PARITY_DEVICE_FLAG_FLOAT64, 0u, "%s claims float64 with PARITY_VULKAN_FP64=off", info.name);
  cr_assert_eq(info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F64), 0u);
  cr_assert(info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F32));
  cr_assert(strstr(info.math, "f32 f16 bf16: float32 library") && strstr(info.math, "f64: none"), "math: %s",
            info.math);
  double y = 0;
  /* exp(1) and gelu(1) in f32: the float32 library, within the conformance bounds */
  cr_assert_eq(unary1(dev, PARITY_OP_EXP, PARITY_DTYPE_F32, 1.0, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(fabs(y - 2.718281828459045) <= 4 * 0x1p-22, "exp(1) = %.9g", y);
  cr_assert_eq(unary1(dev, PARITY_OP_GELU, PARITY_DTYPE_F32, 1.0, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(fabs(y - 0.8413447460685429) <= 8 * 0x1p-24, "gelu(1) = %.9g", y);
  if (info.dtype_mask & PARITY_DTYPE_BIT(PARITY_DTYPE_F16)) {
    cr_assert_eq(unary1(dev, PARITY_OP_SQRT, PARITY_DTYPE_F16, 2.0, &y), PARITY_STATUS_OK, "%s", parity_last_error());
    cr_assert_eq(y, 1.4140625, "sqrt(2) in f16 = %.9g", y);
  }
}

Test(vk_fp64_modes, off_refuses_f64_naming_the_reason, .timeout = 300) {
  setenv("PARITY_VULKAN_FP64", "off", 1);
  parity_device_t *dev = vt_device();
  double y = 0;
  cr_assert_neq(unary1(dev, PARITY_OP_EXP, PARITY_DTYPE_F64, 1.0, &y), PARITY_STATUS_OK,
                "f64 exp ran with float64 off");
  cr_assert(strstr(parity_last_error(), "PARITY_VULKAN_FP64=off"), "%s", parity_last_error());
}

Test(vk_fp64_modes, on_and_auto_agree_with_off_on_f32_within_bounds, .timeout = 300) {
  setenv("PARITY_VULKAN_FP64", "on", 1);
  parity_device_t *dev = vt_device();
  if (!(info_of(dev).flags & PARITY_DEVICE_FLAG_FLOAT64)) cr_skip_test("no float64 on this device");
  double y = 0;
  cr_assert_eq(unary1(dev, PARITY_OP_EXP, PARITY_DTYPE_F32, 1.0, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(y, (double)2.7182817f, "exp(1) on the software double path = %.9g", y); /* correctly rounded */
  cr_assert_eq(unary1(dev, PARITY_OP_EXP, PARITY_DTYPE_F64, 1.0, &y), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert(fabs(y - 2.718281828459045) <= 0x1p-51, "f64 exp(1) = %.17g", y);
}

Test(vk_fp64_modes, an_unknown_value_is_refused_with_the_variable_named) {
  setenv("PARITY_VULKAN_FP64", "maybe", 1);
  parity_context_t *ctx = pt_fresh_context();
  uint32_t p;
  parity_status_t st = parity_context_find_plugin(ctx, "vulkan", &p);
  if (st == PARITY_STATUS_NOT_FOUND) cr_skip_test("the Vulkan plugin is not built");
  cr_assert_neq(st, PARITY_STATUS_OK, "PARITY_VULKAN_FP64=maybe was accepted");
  cr_assert(strstr(parity_last_error(), "PARITY_VULKAN_FP64='maybe' is not one of auto, on, off"), "%s",
            parity_last_error());
  parity_context_destroy(ctx);
  unsetenv("PARITY_VULKAN_FP64");
}

/* every other knob of the plugin the same way: refused at init, the value quoted (they used to be
 * read with atoi or compared to "1", so garbage silently meant the default) */
Test(vk_fp64_modes, every_knob_refuses_a_bad_value_as_written) {
  static const char *const cases[][3] = {
      {"PARITY_VULKAN_MAX_GROUPS", "abc", "PARITY_VULKAN_MAX_GROUPS='abc' is not a whole number"},
      {"PARITY_VULKAN_MAX_GROUPS", "-4", "PARITY_VULKAN_MAX_GROUPS='-4' is out of range"},
      {"PARITY_VULKAN_MATMUL", "yes", "PARITY_VULKAN_MATMUL='yes' is not one of auto, simple, blocked, tiled"},
      {"PARITY_VULKAN_PIPELINE_CACHE", "none", "PARITY_VULKAN_PIPELINE_CACHE='none' is not one of 0, 1"},
      {"PARITY_VULKAN_VALIDATION", "full", "PARITY_VULKAN_VALIDATION='full' is not one of 0, 1, sync"},
      {"PARITY_VULKAN_UNSAFE_NO_BARRIERS", "2", "PARITY_VULKAN_UNSAFE_NO_BARRIERS='2' is not one of 0, 1"},
      {"PARITY_VULKAN_SCRATCH", "tight", "PARITY_VULKAN_SCRATCH='tight' is not one of rounded, exact"},
      {"PARITY_VULKAN_MIN_ALIGN", "512", "PARITY_VULKAN_MIN_ALIGN='512' is out of range"},
      {"PARITY_VULKAN_MIN_ALIGN", "48", "PARITY_VULKAN_MIN_ALIGN='48': expected 0 (the device's) or a power of two"},
      {"PARITY_VULKAN_BUFFER_MEMORY_TYPES", "-1", "PARITY_VULKAN_BUFFER_MEMORY_TYPES='-1' is out of range"},
      {"PARITY_VULKAN_RING_MEMORY_TYPES", "x", "PARITY_VULKAN_RING_MEMORY_TYPES='x' is not a whole number"},
      {"PARITY_VULKAN_MAX_ALLOCATIONS", "lots", "PARITY_VULKAN_MAX_ALLOCATIONS='lots' is not a whole number"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv(cases[i][0], cases[i][1], 1);
    parity_context_t *ctx = pt_fresh_context();
    uint32_t p;
    parity_status_t st = parity_context_find_plugin(ctx, "vulkan", &p);
    if (st == PARITY_STATUS_NOT_FOUND) cr_skip_test("the Vulkan plugin is not built");
    cr_assert_neq(st, PARITY_STATUS_OK, "%s=%s was accepted", cases[i][0], cases[i][1]);
    cr_assert(strstr(parity_last_error(), cases[i][2]), "%s", parity_last_error());
    parity_context_destroy(ctx);
    unsetenv(cases[i][0]);
  }
}

/* parity-conform's verdict on such a device names what it gives up: f64, and nothing else */
Test(vk_fp64_modes, the_conformance_verdict_states_f64_unsupported_and_nothing_else, .timeout = 300) {
  (void)vt_device(); /* skipped without a Vulkan device */
  char cmd[512], line[1024], verdict[1024] = "";
  snprintf(cmd, sizeof cmd, "%s/parity-conform --backend vulkan --env PARITY_VULKAN_FP64=off --op exp,cast,sum 2>&1",
           PARITY_BIN_DIR);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  while (fgets(line, sizeof line, p))
    if (!strncmp(line, "verdict ", 8)) snprintf(verdict, sizeof verdict, "%s", line);
  int rc = pclose(p);
  cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "parity-conform exited %d: %s", rc, verdict);
  cr_assert(strstr(verdict, "PASS on "), "%s", verdict);
  cr_assert(strstr(verdict, " unsupported (every f64 case) ("), "%s", verdict);
  cr_assert(!strstr(verdict, " in f32, f64"), "%s", verdict);
}
