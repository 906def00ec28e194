/* vk_test.h — helpers for the Vulkan plugin's tests: the Vulkan device (tests skip cleanly when
 * the plugin is not built or no Vulkan device exists) and a fresh context, for tests that change
 * the environment before the plugin initialises. */
#ifndef PARITY_TESTS_VK_TEST_H
#define PARITY_TESTS_VK_TEST_H

#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* A context of our own that searches only the build tree, and its Vulkan plugin index (the test
 * is skipped when the plugin is not built). */
static inline parity_context_t *vt_context(uint32_t *out_plugin) {
  parity_context_t *ctx = pt_fresh_context();
  if (parity_context_find_plugin(ctx, "vulkan", out_plugin) != PARITY_STATUS_OK) {
    parity_context_destroy(ctx);
    cr_skip_test("the Vulkan plugin is not built");
  }
  return ctx;
}

/* The Vulkan device: skipped when the plugin is unavailable here, failed when it is loaded with
 * devices but none opens. */
static inline parity_device_t *vt_device(void) {
  uint32_t p;
  parity_context_t *ctx = vt_context(&p);
  parity_plugin_record_t rec;
  cr_assert_eq(parity_context_plugin(ctx, p, &rec), PARITY_STATUS_OK);
  int have = rec.state == PARITY_PLUGIN_STATE_LOADED && rec.device_count > 0;
  char why[512];
  snprintf(why, sizeof why, "%s", rec.reason ? rec.reason : "");
  parity_context_destroy(ctx);
  if (!have) cr_skip_test("no Vulkan device here (%s)", why);
  parity_device_t *dev = pt_try_device("vulkan");
  cr_assert_not_null(dev, "the Vulkan device exists but does not open: %s", parity_last_error());
  return dev;
}

#endif
