/* With no NVIDIA driver the plugin still loads, and init says so: UNAVAILABLE with "no NVIDIA
 * driver (libcuda.so.1 not found)". CTest runs this with the toolkit's stub directory
 * (lib64/stubs, which holds a libcuda.so that fails every call) on LD_LIBRARY_PATH: the plugin
 * must not take the stub for a driver. On a machine with a driver the test is skipped. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "cu_test.h"

Test(cuda_nodriver, init_is_unavailable_with_the_reason) {
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (drv) cr_skip_test("this machine has an NVIDIA driver (libcuda.so.1)");
  const char *ld = getenv("LD_LIBRARY_PATH");
  cr_expect(ld && strstr(ld, "stubs"), "CTest puts the toolkit's stubs on LD_LIBRARY_PATH (%s)", ld ? ld : "unset");
  const parity_plugin_api_t *api = ct_plugin();
  ct_last_error[0] = 0;
  cr_assert_eq(api->init(), PARITY_STATUS_UNAVAILABLE, "init: %s", ct_last_error);
  cr_expect_eq(ct_last_status, PARITY_STATUS_UNAVAILABLE);
  cr_expect_str_eq(ct_last_error, "cuda: no NVIDIA driver (libcuda.so.1 not found)");
}

Test(cuda_nodriver, shutdown_after_a_failed_init_is_harmless) {
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (drv) cr_skip_test("this machine has an NVIDIA driver (libcuda.so.1)");
  const parity_plugin_api_t *api = ct_plugin();
  cr_assert_eq(api->init(), PARITY_STATUS_UNAVAILABLE);
  api->shutdown();
  cr_assert_eq(api->init(), PARITY_STATUS_UNAVAILABLE); /* and again */
  api->shutdown();
}

/* A process that already loaded the stub (its soname is libcuda.so.1, so dlopen("libcuda.so.1")
 * then returns it) is told so, as unavailable. */
Test(cuda_nodriver, a_stub_loaded_under_the_drivers_name_is_not_a_driver) {
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (drv) cr_skip_test("this machine has an NVIDIA driver (libcuda.so.1)");
  void *stub = dlopen("libcuda.so", RTLD_NOW | RTLD_GLOBAL);
  if (!stub) cr_skip_test("no stub libcuda.so on LD_LIBRARY_PATH: %s", dlerror());
  const parity_plugin_api_t *api = ct_plugin();
  ct_last_error[0] = 0;
  cr_assert_eq(api->init(), PARITY_STATUS_UNAVAILABLE, "init: %s", ct_last_error);
  cr_expect(strstr(ct_last_error, "no NVIDIA driver") != NULL, "%s", ct_last_error);
  cr_expect(strstr(ct_last_error, "stub") != NULL, "%s", ct_last_error);
}
