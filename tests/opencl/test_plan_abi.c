/* test_plan_abi.c — the OpenCL plugin's plan entries driven through its function table (dlopen),
 * for what the core never issues: a fill whose byte offset its pattern does not divide, which
 * OpenCL cannot fill (eager: a write of a host copy; a plan: the host copy kept in the plan).
 * Replayed, it writes what the eager buffer_fill wrote, every time, and the plan can be released
 * right after its run (release waits for the queue before freeing the copy). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "parity_plugin.h"

#define OCL_PLUGIN_PATH PARITY_BIN_DIR "/../lib/parity-plugin-opencl.so"

static char last_error[2048];
static void report(void *data, int32_t status, const char *message) {
  (void)data, (void)status;
  snprintf(last_error, sizeof last_error, "%s", message);
}
static void log_msg(void *data, int32_t level, const char *message) { (void)data, (void)level, (void)message; }
static const parity_host_api_t host = {
    .struct_size = sizeof(parity_host_api_t), .report_error = report, .log = log_msg};

#define OK(x) cr_assert_eq((x), PARITY_STATUS_OK, "%s: %s", #x, last_error)

/* The plugin's table and its first device; skips where the plugin or a device is missing. */
static const parity_plugin_api_t *open_plugin(parity_plugin_device_t **dev) {
  void *lib = dlopen(OCL_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!lib) cr_skip_test("no OpenCL plugin: %s", dlerror());
  parity_plugin_query_fn q = (parity_plugin_query_fn)dlsym(lib, PARITY_PLUGIN_ENTRY_NAME);
  cr_assert_not_null(q, "no %s in the OpenCL plugin", PARITY_PLUGIN_ENTRY_NAME);
  parity_plugin_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  OK(q(PARITY_ABI_MAJOR, PARITY_ABI_MINOR, &host, &info));
  const parity_plugin_api_t *api = info.api;
  cr_assert(api->plan_prepare && api->plan_run && api->plan_release, "the OpenCL plugin has no plan entries");
  uint32_t n = 0;
  if (api->init() != PARITY_STATUS_OK || api->get_device_count(&n) != PARITY_STATUS_OK || n == 0)
    cr_skip_test("no OpenCL device here: %s", last_error);
  OK(api->device_open(0, dev));
  return api;
}

enum { BYTES = 64 };

static void read_back(const parity_plugin_api_t *api, parity_plugin_device_t *dev, parity_plugin_buffer_t *b,
                      unsigned char *out) {
  OK(api->buffer_read(dev, b, 0, out, BYTES));
}

Test(opencl_plan_abi, a_fill_its_pattern_does_not_align_replays_like_eager) {
  parity_plugin_device_t *dev;
  const parity_plugin_api_t *api = open_plugin(&dev);
  parity_plugin_buffer_t *eager, *planned;
  OK(api->buffer_alloc(dev, BYTES, &eager));
  OK(api->buffer_alloc(dev, BYTES, &planned));
  unsigned char ramp[BYTES], want[BYTES], got[BYTES];
  for (int i = 0; i < BYTES; i++) ramp[i] = (unsigned char)(200 - i);
  const unsigned char pattern[4] = {0x11, 0x22, 0x33, 0x44};
  /* offset 6, 24 bytes: OpenCL wants the offset a multiple of the pattern size */
  OK(api->buffer_write(dev, eager, 0, ramp, BYTES));
  OK(api->buffer_fill(dev, eager, 6, 24, pattern, 4));
  read_back(api, dev, eager, want);
  cr_assert_neq(memcmp(want, ramp, BYTES), 0, "the eager fill wrote nothing");
  parity_plan_command_t cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.struct_size = sizeof cmd;
  cmd.kind = PARITY_PLAN_COMMAND_FILL;
  cmd.buffer = planned;
  cmd.offset_bytes = 6;
  cmd.size_bytes = 24;
  memcpy(cmd.pattern, pattern, 4);
  cmd.pattern_size = 4;
  OK(api->buffer_write(dev, planned, 0, ramp, BYTES));
  parity_plugin_plan_t *plan = NULL;
  OK(api->plan_prepare(dev, &cmd, 1, &plan));
  cr_assert_not_null(plan);
  read_back(api, dev, planned, got); /* prepare records: nothing written yet */
  cr_assert_eq(memcmp(got, ramp, BYTES), 0, "plan_prepare wrote into the buffer");
  for (int run = 0; run < 3; run++) {
    OK(api->buffer_write(dev, planned, 0, ramp, BYTES)); /* new contents before each replay */
    OK(api->plan_run(dev, plan));
    read_back(api, dev, planned, got);
    for (int i = 0; i < BYTES; i++)
      cr_assert_eq(got[i], want[i], "run %d, byte %d: replayed 0x%02x, eager 0x%02x", run, i, got[i], want[i]);
  }
  OK(api->buffer_write(dev, planned, 0, ramp, BYTES));
  OK(api->plan_run(dev, plan));
  api->plan_release(dev, plan); /* right after the run: the queued write still reads the copy */
  read_back(api, dev, planned, got);
  cr_assert_eq(memcmp(got, want, BYTES), 0, "released right after its run, the plan's fill did not land");
  api->buffer_free(dev, eager);
  api->buffer_free(dev, planned);
  api->device_close(dev);
  api->shutdown();
}
