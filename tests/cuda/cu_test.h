/* cu_test.h — the CUDA plugin's host tests load parity-plugin-cuda.so directly (dlopen) and drive
 * its function table, recording what it reports through the host API. */
#ifndef PARITY_TESTS_CU_TEST_H
#define PARITY_TESTS_CU_TEST_H

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "parity_plugin.h"

static char ct_last_error[2048];
static int32_t ct_last_status;

static void ct_report(void *data, int32_t status, const char *message) {
  (void)data;
  ct_last_status = status;
  snprintf(ct_last_error, sizeof ct_last_error, "%s", message);
}
static void ct_log(void *data, int32_t level, const char *message) { (void)data, (void)level, (void)message; }
static const parity_host_api_t ct_host = {
    .struct_size = sizeof(parity_host_api_t), .report_error = ct_report, .log = ct_log};

/* The plugin's function table (the library stays loaded for the test process). */
static inline const parity_plugin_api_t *ct_plugin(void) {
  void *lib = dlopen(CUDA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(lib, "dlopen %s: %s", CUDA_PLUGIN_PATH, dlerror());
  parity_plugin_query_fn q = (parity_plugin_query_fn)dlsym(lib, PARITY_PLUGIN_ENTRY_NAME);
  cr_assert_not_null(q, "no %s in the CUDA plugin", PARITY_PLUGIN_ENTRY_NAME);
  parity_plugin_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(q(PARITY_ABI_MAJOR, PARITY_ABI_MINOR, &ct_host, &info), PARITY_STATUS_OK);
  cr_assert_str_eq(info.name, "cuda");
  cr_assert_str_eq(info.backend, "cuda");
  cr_assert_not_null(info.api);
  return info.api;
}

#endif
