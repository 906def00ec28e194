/* Loader behaviour: discovery, negotiation, struct-size tolerance, broken plugins, selection
 * errors. Fake plugins live in FAKE_DIR (see fake_plugin.c); the real CPU plugin comes from
 * the build tree. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "parity/device.h"

static parity_context_t *open_ctx(const char *backend, int device, const char *path) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = backend;
  o.device_index = device;
  o.plugin_path = path ? path : "";
  o.log_level = 0;
  parity_context_t *ctx = NULL;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  return ctx;
}

/* The record of the plugin whose file name contains `needle`. */
static parity_plugin_record_t record(parity_context_t *ctx, const char *needle) {
  for (uint32_t i = 0; i < parity_context_plugin_count(ctx); i++) {
    parity_plugin_record_t r;
    cr_assert_eq(parity_context_plugin(ctx, i, &r), PARITY_STATUS_OK);
    if (strstr(r.path, needle)) return r;
  }
  cr_assert_fail("no plugin file matching %s was found", needle);
  parity_plugin_record_t none = {0};
  return none;
}

static void assert_cpu_usable(parity_context_t *ctx) {
  uint32_t p;
  cr_assert_eq(parity_context_find_plugin(ctx, "cpu", &p), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_device_t *dev;
  cr_assert_eq(parity_context_open_device(ctx, p, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_buffer_t *b;
  cr_assert_eq(parity_buffer_alloc(dev, 8, &b), PARITY_STATUS_OK);
  uint64_t v = 42, got = 0;
  cr_assert_eq(parity_buffer_write(b, 0, &v, 8), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_read(b, 0, &got, 8), PARITY_STATUS_OK);
  cr_assert_eq(got, 42);
  parity_buffer_free(b);
}

/* Run neg on [1, -2, 3] through the device; the way "loads and works" is checked. */
static void assert_neg_works(parity_device_t *dev) {
  float in[3] = {1, -2, 3}, out[3] = {0};
  parity_buffer_t *a, *b;
  cr_assert_eq(parity_buffer_alloc(dev, sizeof in, &a), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_alloc(dev, sizeof out, &b), PARITY_STATUS_OK);
  cr_assert_eq(parity_buffer_write(a, 0, in, sizeof in), PARITY_STATUS_OK);
  parity_tensor_desc_t x = {.struct_size = sizeof x,
                            .dtype = PARITY_DTYPE_F32,
                            .rank = 1,
                            .shape = {3},
                            .strides = {1},
                            .buffer = parity_buffer_handle(a)};
  parity_tensor_desc_t y = x;
  y.buffer = parity_buffer_handle(b);
  parity_op_desc_t d = {.struct_size = sizeof d,
                        .op = PARITY_OP_NEG,
                        .direction = PARITY_DIRECTION_FORWARD,
                        .num_inputs = 1,
                        .num_outputs = 1,
                        .inputs = {&x},
                        .outputs = {&y}};
  cr_assert_eq(parity_device_run(dev, &d), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(parity_buffer_read(b, 0, out, sizeof out), PARITY_STATUS_OK);
  cr_assert(out[0] == -1 && out[1] == 2 && out[2] == -3);
  parity_buffer_free(a);
  parity_buffer_free(b);
}

Test(loader, finds_the_cpu_plugin_in_the_build_tree) {
  parity_context_t *ctx = open_ctx("cpu", 0, NULL);
  parity_plugin_record_t r = record(ctx, "parity-plugin-cpu.so");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_LOADED);
  cr_assert_str_eq(r.name, "cpu");
  cr_assert_eq(r.abi_major, PARITY_ABI_MAJOR);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_backend(dev), "cpu");
  parity_context_destroy(ctx);
}

Test(loader, file_that_is_not_a_shared_library_is_skipped_with_dlerror) {
  parity_context_t *ctx = open_ctx("cpu", 0, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "parity-plugin-garbage.so");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED);
  cr_assert(strstr(r.reason, "dlopen failed:"), "%s", r.reason);
  cr_assert(strstr(r.reason, "parity-plugin-garbage.so"), "dlerror() names the file: %s", r.reason);
  cr_assert(strstr(r.reason, "remedy:"), "%s", r.reason);
  assert_cpu_usable(ctx);
  parity_context_destroy(ctx);
}

Test(loader, library_without_entry_symbol_is_skipped) {
  parity_context_t *ctx = open_ctx("cpu", 0, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "fakenosym");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED);
  cr_assert(strstr(r.reason, "no entry symbol parity_plugin_query"), "%s", r.reason);
  assert_cpu_usable(ctx);
  parity_context_destroy(ctx);
}

Test(loader, a_function_table_with_null_required_entries_is_skipped_naming_them) {
  parity_context_t *ctx = open_ctx(NULL, -1, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "fakenullfn");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED, "%s", r.reason);
  cr_assert(strstr(r.reason, "NULL required entries: buffer_fill, supports"), "%s", r.reason);
  assert_cpu_usable(ctx);
  parity_context_destroy(ctx);
}

Test(loader, plugin_refusing_the_host_major_is_skipped_with_both_versions) {
  parity_context_t *ctx = open_ctx("cpu", 0, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "fakerefuse");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED);
  cr_assert(strstr(r.reason, "needs a host speaking ABI 2.x"), "refusal text: %s", r.reason);
  cr_assert(strstr(r.reason, "plugin ABI 2.0"), "%s", r.reason);
  char host[32];
  snprintf(host, sizeof host, "host ABI %u.%u", PARITY_ABI_MAJOR, PARITY_ABI_MINOR);
  cr_assert(strstr(r.reason, host), "%s", r.reason);
  cr_assert(strstr(r.reason, "remedy:"), "%s", r.reason);
  assert_cpu_usable(ctx);
  parity_context_destroy(ctx);
}

Test(loader, plugin_built_against_smaller_structs_loads_and_works) {
  parity_context_t *ctx = open_ctx("fakeolder", 0, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "fakeolder");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_LOADED, "%s", r.reason);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  assert_neg_works(dev);
  /* fields past the plugin's device-info size keep their defaults */
  parity_device_info_t info = {.struct_size = sizeof info};
  cr_assert_eq(parity_device_get_info(dev, &info), PARITY_STATUS_OK);
  cr_assert_str_eq(info.name, "fake device fakeolder");
  cr_assert_eq(info.denormals, PARITY_DENORMALS_UNKNOWN);
  /* entries past the plugin's table size are treated as absent, never called */
  parity_tensor_desc_t x = {
      .struct_size = sizeof x, .dtype = PARITY_DTYPE_F32, .rank = 1, .shape = {3}, .strides = {1}};
  parity_tensor_desc_t y = x;
  parity_op_desc_t d = {.struct_size = sizeof d,
                        .op = PARITY_OP_SOFTMAX,
                        .direction = PARITY_DIRECTION_FORWARD,
                        .num_inputs = 1,
                        .num_outputs = 1,
                        .inputs = {&x},
                        .outputs = {&y}};
  cr_assert_eq(parity_device_supports(dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_assert(strstr(parity_last_error(), "has no softmax forward entry"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}

Test(loader, plugin_built_against_larger_structs_loads_and_works) {
  parity_context_t *ctx = open_ctx("fakenewer", 0, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "fakenewer");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_LOADED, "%s", r.reason);
  cr_assert_eq(r.abi_minor, PARITY_ABI_MINOR + 1);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  assert_neg_works(dev);
  /* the newer plugin writes no further than the host's struct_size */
  struct {
    parity_device_info_t info;
    uint64_t guard;
  } probe;
  memset(&probe, 0xab, sizeof probe);
  probe.info.struct_size = sizeof probe.info;
  uint32_t p;
  cr_assert_eq(parity_context_find_plugin(ctx, "fakenewer", &p), PARITY_STATUS_OK);
  cr_assert_eq(parity_context_device_info(ctx, p, 0, &probe.info), PARITY_STATUS_OK);
  cr_assert_eq(probe.guard, 0xababababababababull, "plugin wrote past the host's struct");
  cr_assert_eq(probe.info.denormals, PARITY_DENORMALS_PRESERVED);
  parity_context_destroy(ctx);
}

Test(loader, device_open_failure_is_reported_and_other_plugins_stay_usable) {
  parity_context_t *ctx = open_ctx("fakedevfail", 0, FAKE_DIR);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_DEVICE_ERROR);
  cr_assert(strstr(parity_last_error(), "fakedevfail"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "fake device is wedged"), "%s", parity_last_error());
  parity_plugin_record_t r = record(ctx, "fakedevfail");
  cr_assert(strstr(r.reason, "device 0 open failed"), "recorded for parity-info: %s", r.reason);
  assert_cpu_usable(ctx);
  parity_context_destroy(ctx);
}

Test(loader, auto_skips_a_failing_device_and_picks_the_cpu) {
  parity_context_t *ctx = open_ctx("auto", -1, FAKE_DIR);
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_backend(dev), "cpu");
  parity_context_destroy(ctx);
}

Test(loader, auto_prefers_gpus_in_the_documented_backend_order_not_file_order) {
  parity_context_t *ctx = open_ctx("auto", -1, FAKE_GPU_DIR); /* fakegpuocl.so sorts first */
  parity_device_t *dev = NULL;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_backend(dev), "vulkan", "auto chose %s (%s)", parity_device_backend(dev),
                   parity_device_plugin_name(dev));
  parity_context_destroy(ctx);
  /* GPUs of every kind (another backend, OpenCL, Vulkan, CUDA in file order): CUDA wins */
  ctx = open_ctx("auto", -1, FAKE_GPU_ALL_DIR);
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_backend(dev), "cuda", "auto chose %s (%s)", parity_device_backend(dev),
                   parity_device_plugin_name(dev));
  parity_context_destroy(ctx);
}

Test(loader, unavailable_backend_says_why) {
  parity_context_t *ctx = open_ctx("fakeunavailable", 0, FAKE_DIR);
  parity_plugin_record_t r = record(ctx, "fakeunavailable");
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_UNAVAILABLE);
  cr_assert(strstr(r.reason, "unavailable: no fake driver on this machine"), "%s", r.reason);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_UNAVAILABLE);
  cr_assert(strstr(parity_last_error(), "no fake driver"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}

Test(loader, unknown_backend_names_the_value_and_lists_what_is_available) {
  parity_context_t *ctx = open_ctx("nope", 0, NULL);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_NOT_FOUND);
  cr_assert(strstr(parity_last_error(), "'nope'"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "available: cpu"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}

Test(loader, device_index_out_of_range_names_the_value_and_the_range) {
  parity_context_t *ctx = open_ctx("cpu", 7, NULL);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OUT_OF_RANGE);
  cr_assert(strstr(parity_last_error(), "PARITY_DEVICE=7"), "%s", parity_last_error());
  cr_assert(strstr(parity_last_error(), "1 device(s)"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}

Test(loader, environment_selects_backend_and_device) {
  setenv("PARITY_BACKEND", "fakenormal", 1);
  setenv("PARITY_DEVICE", "0", 1);
  setenv("PARITY_PLUGIN_PATH", FAKE_DIR, 1);
  setenv("PARITY_LOG", "quiet", 1);
  parity_context_t *ctx;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_OK);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_plugin_name(dev), "fakenormal");
  parity_context_destroy(ctx);
  setenv("PARITY_DEVICE", "x1", 1); /* refused at once, named as written (was "2147483647 is out of range") */
  ctx = NULL;
  cr_assert_eq(parity_context_create(NULL, &ctx), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert_null(ctx);
  cr_assert(strstr(parity_last_error(), "PARITY_DEVICE='x1' is not a whole number"), "%s", parity_last_error());
  unsetenv("PARITY_DEVICE");
}

Test(loader, missing_plugin_path_folder_is_noted_and_not_fatal) {
  parity_context_t *ctx = open_ctx("cpu", 0, "/nonexistent/parity-plugins:" FAKE_DIR);
  cr_assert_geq(parity_context_note_count(ctx), 1);
  cr_assert(strstr(parity_context_note(ctx, 0), "'/nonexistent/parity-plugins' does not exist"), "%s",
            parity_context_note(ctx, 0));
  record(ctx, "fakenormal"); /* the next folder was still searched */
  assert_cpu_usable(ctx);
  parity_context_destroy(ctx);
}

Test(loader, plugin_path_comes_before_the_build_tree) {
  /* The build tree's cpu plugin, named again through PARITY_PLUGIN_PATH, is loaded once, and
   * from the first folder. */
  parity_context_t *ctx = open_ctx("cpu", 0, BUILD_PLUGIN_DIR);
  int seen = 0;
  for (uint32_t i = 0; i < parity_context_plugin_count(ctx); i++) {
    parity_plugin_record_t r;
    parity_context_plugin(ctx, i, &r);
    if (strcmp(r.name, "cpu") == 0) seen++;
  }
  cr_assert_eq(seen, 1);
  parity_context_destroy(ctx);
}

Test(loader, two_contexts_share_a_plugin_safely) {
  parity_context_t *a = open_ctx("fakenormal", 0, FAKE_DIR);
  parity_context_t *b = open_ctx("fakenormal", 0, FAKE_DIR);
  parity_context_destroy(a);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(b, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  assert_neg_works(dev);
  parity_context_destroy(b);
}

Test(loader, debug_log_prints_every_decision, .init = cr_redirect_stderr) {
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "cpu";
  o.plugin_path = FAKE_DIR;
  o.log_level = 2;
  parity_context_t *ctx;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK);
  parity_context_destroy(ctx);
  fflush(stderr);
  FILE *f = cr_get_redirected_stderr();
  char buf[16384];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  cr_assert(strstr(buf, "trying "), "%s", buf);
  cr_assert(strstr(buf, "skipped "), "%s", buf);
  cr_assert(strstr(buf, "loaded "), "%s", buf);
  cr_assert(strstr(buf, "selected device 0 of plugin 'cpu'"), "%s", buf);
}

static int run_info(const char *env, char *out, size_t n) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "env PARITY_PLUGIN_PATH= PARITY_LOG=quiet %s '%s' 2>&1", env, PARITY_INFO_EXE);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, n - 1, p);
  out[got] = 0;
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(parity_info, shows_the_cpu_plugin_and_exits_zero) {
  char out[8192];
  cr_assert_eq(run_info("PARITY_BACKEND=cpu", out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "cpu        loaded"), "%s", out);
  cr_assert(strstr(out, "float64 yes"), "%s", out);
}

Test(parity_info, unknown_backend_exits_nonzero_and_lists_backends) {
  char out[8192];
  cr_assert_neq(run_info("PARITY_BACKEND=nope", out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "PARITY_BACKEND='nope' names no plugin; available: cpu"), "%s", out);
}

Test(parity_info, json_lists_plugins_and_selection) {
  char out[8192];
  cr_assert_eq(run_info("PARITY_BACKEND=cpu", out, 16), 0); /* warm */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "env PARITY_BACKEND=cpu PARITY_LOG=quiet PARITY_PLUGIN_PATH= '%s' --json", PARITY_INFO_EXE);
  FILE *p = popen(cmd, "r");
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  cr_assert_eq(pclose(p), 0);
  cr_assert(strstr(out, "\"name\":\"cpu\""), "%s", out);
  cr_assert(strstr(out, "\"selected\":{\"plugin\":\"cpu\",\"device\":0}"), "%s", out);
}
