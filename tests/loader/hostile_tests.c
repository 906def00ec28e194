/* Hostile plugins: every value a plugin returns is untrusted input. Each plugin sits alone in its
 * own folder (FAKE_HOSTILE_DIR/<name>); the real CPU plugin from the build tree must stay usable
 * beside it, and nothing may crash, hang or over-read. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "parity/device.h"

static parity_context_t *open_with(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", FAKE_HOSTILE_DIR, name);
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "auto";
  o.plugin_path = path;
  o.log_level = 0;
  parity_context_t *ctx = NULL;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  return ctx;
}

static parity_plugin_record_t hostile_record(parity_context_t *ctx, uint32_t *index) {
  for (uint32_t i = 0; i < parity_context_plugin_count(ctx); i++) {
    parity_plugin_record_t r;
    cr_assert_eq(parity_context_plugin(ctx, i, &r), PARITY_STATUS_OK);
    if (strstr(r.path, FAKE_HOSTILE_DIR)) {
      if (index) *index = i;
      return r;
    }
  }
  cr_assert_fail("the hostile plugin was not tried");
  parity_plugin_record_t none = {0};
  return none;
}

/* auto still ends on the CPU plugin, and it computes. */
static void assert_auto_picks_cpu(parity_context_t *ctx) {
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_plugin_name(dev), "cpu");
  parity_tensor_t *t;
  cr_assert_eq(parity_tensor_from_f64(dev, PARITY_DTYPE_F64, 1, (int64_t[]){2}, (double[]){1, 2}, &t),
               PARITY_STATUS_OK);
  parity_tensor_release(t);
}

Test(hostile, a_plugin_reporting_2_to_the_32_minus_1_devices_is_skipped_with_the_count) {
  parity_context_t *ctx = open_with("manydev");
  parity_plugin_record_t r = hostile_record(ctx, NULL);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED);
  cr_assert(strstr(r.reason, "reported 4294967295 devices, more than the 64"), "%s", r.reason);
  assert_auto_picks_cpu(ctx);
  parity_context_destroy(ctx);
}

Test(hostile, a_plugin_reporting_2_to_the_31_devices_is_skipped_and_auto_stays_quick, .timeout = 20) {
  parity_context_t *ctx = open_with("dev2g");
  parity_plugin_record_t r = hostile_record(ctx, NULL);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED);
  cr_assert(strstr(r.reason, "reported 2147483648 devices"), "%s", r.reason);
  assert_auto_picks_cpu(ctx);
  parity_context_destroy(ctx);
}

Test(hostile, an_error_text_without_nul_is_read_within_bounds) {
  parity_context_t *ctx = open_with("errnonul");
  parity_plugin_record_t r = hostile_record(ctx, NULL);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED);
  cr_assert(strstr(r.reason, "init failed: device error: EEEEEEEE"), "%s", r.reason);
  cr_assert_lt(strlen(r.reason), 512);
  /* ABI 1.2's report_error_n: exactly the 100 bytes stated, though no NUL follows before the
   * guard page (report_error, which reads up to 1023, faulted on such a text) */
  const char *e = strstr(r.reason, "EEEE");
  cr_assert_eq(strspn(e, "E"), 100, "%s", r.reason);
  assert_auto_picks_cpu(ctx);
  parity_context_destroy(ctx);
}

Test(hostile, names_and_query_errors_without_nul_are_bounded_and_terminated) {
  parity_context_t *ctx = open_with("querynonul");
  parity_plugin_record_t r = hostile_record(ctx, NULL);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_LOADED, "%s", r.reason);
  cr_assert_eq(strlen(r.name), 63);
  cr_assert_eq(strspn(r.name, "Q"), 63);
  cr_assert_eq(strlen(r.backend), 63);
  cr_assert_eq(strlen(r.version), 63);
  parity_context_destroy(ctx);
}

Test(hostile, a_device_name_without_nul_is_terminated_by_the_host) {
  parity_context_t *ctx = open_with("namenonul");
  uint32_t index;
  parity_plugin_record_t r = hostile_record(ctx, &index);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_LOADED, "%s", r.reason);
  parity_device_info_t info = {.struct_size = sizeof info};
  cr_assert_eq(parity_context_device_info(ctx, index, 0, &info), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(strlen(info.name), sizeof info.name - 1);
  cr_assert_eq(strlen(info.driver), sizeof info.driver - 1);
  cr_assert_eq(strlen(info.math), sizeof info.math - 1);
  parity_device_t *dev;
  cr_assert_eq(parity_context_open_device(ctx, index, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_device_info_t again = {.struct_size = sizeof again};
  cr_assert_eq(parity_device_get_info(dev, &again), PARITY_STATUS_OK);
  cr_assert_eq(strlen(again.name), sizeof again.name - 1);
  parity_context_destroy(ctx);
}

Test(hostile, parity_info_lists_a_device_name_without_nul_and_exits_zero) {
  char cmd[1024], out[16384];
  snprintf(cmd, sizeof cmd, "env PARITY_LOG=quiet PARITY_BACKEND=cpu PARITY_PLUGIN_PATH='%s/namenonul' '%s' 2>&1",
           FAKE_HOSTILE_DIR, PARITY_INFO_EXE);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  int status = pclose(p);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s", status, out);
  cr_assert(strstr(out, "NNNNNNNN"), "%s", out);
}

/* Issue 38, item 5: a plugin that crashes while it initialises takes only a child process of
 * parity-info down: it is named with the signal, the others are listed, and the exit status says so.
 * (Before, parity-info died with it: no listing, status of SIGSEGV.) */
Test(hostile, parity_info_names_a_plugin_that_crashes_and_lists_the_others) {
  char cmd[1024], out[32768];
  snprintf(cmd, sizeof cmd,
           "env ASAN_OPTIONS=\"$ASAN_OPTIONS:handle_segv=0\" PARITY_LOG=quiet PARITY_BACKEND= "
           "PARITY_PLUGIN_PATH='%s/initcrash' '%s' 2>&1",
           FAKE_HOSTILE_DIR, PARITY_INFO_EXE);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  int status = pclose(p);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status, out);
  cr_assert(strstr(out, "initcrash  crashed"), "%s", out);
  cr_assert(strstr(out, "crashed with SIGSEGV while initialising"), "%s", out);
  cr_assert(strstr(out, "cpu        loaded"), "the CPU plugin was not listed after the crash:\n%s", out);
}

Test(hostile, buffer_alloc_ok_without_a_handle_is_an_error) {
  parity_context_t *ctx = open_with("nullhandle");
  uint32_t index;
  hostile_record(ctx, &index);
  parity_device_t *dev;
  cr_assert_eq(parity_context_open_device(ctx, index, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_buffer_t *b = (parity_buffer_t *)1;
  cr_assert_eq(parity_buffer_alloc(dev, 64, &b), PARITY_STATUS_INTERNAL);
  cr_assert(strstr(parity_last_error(), "returned OK with no buffer handle"), "%s", parity_last_error());
  parity_context_destroy(ctx);
}

Test(hostile, device_open_ok_without_a_handle_is_an_error) {
  parity_context_t *ctx = open_with("badhandle");
  uint32_t index;
  hostile_record(ctx, &index);
  parity_device_t *dev = NULL;
  cr_assert_neq(parity_context_open_device(ctx, index, 0, &dev), PARITY_STATUS_OK);
  cr_assert(strstr(parity_last_error(), "no device handle"), "%s", parity_last_error());
  assert_auto_picks_cpu(ctx);
  parity_context_destroy(ctx);
}

Test(hostile, device_info_never_writes_past_the_host_struct_whatever_struct_size_says) {
  parity_context_t *ctx = open_with("manydev");
  uint32_t cpu;
  cr_assert_eq(parity_context_find_plugin(ctx, "cpu", &cpu), PARITY_STATUS_OK);
  struct {
    parity_device_info_t info;
    unsigned char canary[256];
  } mem;
  memset(&mem, 0xAB, sizeof mem);
  mem.info.struct_size = 0x80000000u;
  cr_assert_eq(parity_context_device_info(ctx, cpu, 0, &mem.info), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_eq(mem.info.struct_size, sizeof mem.info);
  for (size_t i = 0; i < sizeof mem.canary; i++) cr_assert_eq(mem.canary[i], 0xAB, "byte %zu written", i);
  parity_context_destroy(ctx);
}

/* A context asked for cpu, searching only the named hostile plugin's folder (and the build tree). */
static parity_context_t *open_selecting_cpu(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", FAKE_HOSTILE_DIR, name);
  parity_context_options_t o;
  parity_context_options_init(&o);
  o.backend = "cpu";
  o.plugin_path = path;
  o.log_level = 0;
  parity_context_t *ctx = NULL;
  cr_assert_eq(parity_context_create(&o, &ctx), PARITY_STATUS_OK, "%s", parity_last_error());
  return ctx;
}

/* Lazy initialisation: selecting one backend never initialises another plugin (here one whose
 * init would crash the process), until something asks for it. */
Test(lazy, selecting_cpu_never_initialises_another_plugin) {
  parity_context_t *ctx = open_selecting_cpu("initcrash");
  cr_assert_geq(parity_context_plugin_count(ctx), 2, "the crashing plugin was found (and identified)");
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_plugin_name(dev), "cpu");
  parity_tensor_t *x, *y;
  cr_assert_eq(parity_tensor_from_f64(dev, PARITY_DTYPE_F64, 1, (int64_t[]){2}, (double[]){1, 2}, &x),
               PARITY_STATUS_OK);
  cr_assert_eq(parity_unary(PARITY_OP_NEG, x, &y), PARITY_STATUS_OK);
  parity_tensor_release(y);
  parity_tensor_release(x);
  parity_context_destroy(ctx);
}

Test(lazy, a_deferred_plugin_is_initialised_when_asked_for) {
  parity_context_t *ctx = open_selecting_cpu("namenonul");
  uint32_t i;
  cr_assert_eq(parity_context_find_plugin(ctx, "namenonul", &i), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_device_t *dev;
  cr_assert_eq(parity_context_open_device(ctx, i, 0, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  parity_plugin_record_t r;
  cr_assert_eq(parity_context_plugin(ctx, i, &r), PARITY_STATUS_OK);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_LOADED);
  cr_assert_eq(r.device_count, 1);
  parity_context_destroy(ctx);
}

/* The identity note (abi/parity_plugin.h): a context asked for cpu reads the other plugin files'
 * notes and loads none of them, so not even their libraries are mapped. (Identified by loading
 * and querying, as plugins without a note are, the file stays mapped: the loader dlopens with
 * RTLD_NODELETE.) */
static int mapped(const char *needle) {
  FILE *f = fopen("/proc/self/maps", "r");
  cr_assert_not_null(f);
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
  fclose(f);
  return found;
}

Test(lazy, selecting_cpu_reads_the_other_plugins_notes_without_loading_them) {
  parity_context_t *ctx = open_selecting_cpu("initcrash");
  cr_assert_geq(parity_context_plugin_count(ctx), 2, "the other plugin was found (and identified)");
  cr_assert_not(mapped("parity-plugin-initcrash.so"), "the unselected plugin's file was loaded");
  cr_assert(mapped("parity-plugin-cpu.so"));
  parity_context_destroy(ctx);
}

Test(lazy, a_plugin_whose_note_differs_from_its_query_is_skipped_naming_both) {
  parity_context_t *ctx = open_selecting_cpu("notelie"); /* its note claims cpu: loaded first */
  parity_plugin_record_t r = hostile_record(ctx, NULL);
  cr_assert_eq(r.state, PARITY_PLUGIN_STATE_SKIPPED, "state %d, reason: %s", r.state, r.reason);
  cr_assert(strstr(r.reason, "identity note") && strstr(r.reason, "'cpu'") && strstr(r.reason, "'notelie'"),
            "reason: %s", r.reason);
  parity_device_t *dev;
  cr_assert_eq(parity_context_default_device(ctx, &dev), PARITY_STATUS_OK, "%s", parity_last_error());
  cr_assert_str_eq(parity_device_plugin_name(dev), "cpu");
  parity_context_destroy(ctx);
}
