/* ABI forward compatibility, from the plugin's side: the real CPU plugin, loaded by hand, serves a
 * simulated ABI 1.1 host — minor 1 in the handshake, a larger host API struct, device info and op
 * and tensor descriptors with a field appended — writing nothing past the sizes it knows and
 * computing correctly. (A simulated 1.1 plugin on this 1.0 host is tests/loader's "newer" fake.) */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "parity_plugin.h"

typedef struct host_v1_1 {
  parity_host_api_t base;
  void (*future_callback)(void);
} host_v1_1;
typedef struct tensor_v1_1 {
  parity_tensor_desc_t base;
  uint64_t future_field;
} tensor_v1_1;
typedef struct op_v1_1 {
  parity_op_desc_t base;
  uint64_t future_field;
} op_v1_1;

static void on_error(void *d, int32_t st, const char *m) { (void)d, (void)st, (void)m; }
static void on_log(void *d, int32_t l, const char *m) { (void)d, (void)l, (void)m; }

Test(abi_compat, a_1_0_plugin_serves_a_simulated_1_1_host) {
  void *h = dlopen(PARITY_BIN_DIR "/../lib/parity-plugin-cpu.so", RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(h, "%s", dlerror());
  parity_plugin_query_fn query = (parity_plugin_query_fn)dlsym(h, PARITY_PLUGIN_ENTRY_NAME);
  cr_assert_not_null(query);
  host_v1_1 host;
  memset(&host, 0, sizeof host);
  host.base.struct_size = sizeof host;
  host.base.report_error = on_error;
  host.base.log = on_log;
  struct {
    parity_plugin_info_t base;
    uint64_t future_field;
  } info;
  memset(&info, 0, sizeof info);
  info.base.struct_size = sizeof info;
  cr_assert_eq(query(PARITY_ABI_MAJOR, PARITY_ABI_MINOR + 1, &host.base, &info.base), PARITY_STATUS_OK);
  cr_assert_eq(info.future_field, 0u, "the plugin wrote past the info struct it knows");
  const parity_plugin_api_t *api = info.base.api;
  cr_assert_eq(api->init(), PARITY_STATUS_OK);

  /* device info with an appended field: nothing written past the plugin's own struct */
  unsigned char raw[sizeof(parity_device_info_t) + 64];
  memset(raw, 0xab, sizeof raw);
  parity_device_info_t *di = (parity_device_info_t *)raw;
  di->struct_size = sizeof(parity_device_info_t) + 8;
  cr_assert_eq(api->get_device_info(0, di), PARITY_STATUS_OK);
  for (size_t i = sizeof(parity_device_info_t); i < sizeof raw; i++) cr_assert_eq(raw[i], 0xab, "byte %zu written", i);

  /* neg through descriptors carrying an appended field */
  parity_plugin_device_t *dev;
  cr_assert_eq(api->device_open(0, &dev), PARITY_STATUS_OK);
  parity_plugin_buffer_t *buf;
  cr_assert_eq(api->buffer_alloc(dev, 64, &buf), PARITY_STATUS_OK);
  float x[4] = {1, -2, 3.5f, -0.0f}, y[4];
  cr_assert_eq(api->buffer_write(dev, buf, 0, x, sizeof x), PARITY_STATUS_OK);
  tensor_v1_1 tx, ty;
  memset(&tx, 0, sizeof tx);
  tx.base.struct_size = sizeof tx;
  tx.base.dtype = PARITY_DTYPE_F32;
  tx.base.rank = 1;
  tx.base.shape[0] = 4;
  tx.base.strides[0] = 1;
  tx.base.buffer = buf;
  tx.future_field = 0x5555555555555555ull;
  ty = tx;
  ty.base.offset_bytes = 32;
  op_v1_1 op;
  memset(&op, 0, sizeof op);
  op.base.struct_size = sizeof op;
  op.base.op = PARITY_OP_NEG;
  op.base.num_inputs = op.base.num_outputs = 1;
  op.base.inputs[0] = &tx.base;
  op.base.outputs[0] = &ty.base;
  cr_assert_eq(api->supports(dev, &op.base), PARITY_STATUS_OK);
  cr_assert_eq(api->elementwise_forward(dev, &op.base), PARITY_STATUS_OK);
  cr_assert_eq(api->buffer_read(dev, buf, 32, y, sizeof y), PARITY_STATUS_OK);
  for (int i = 0; i < 4; i++) cr_assert_eq(memcmp(&y[i], &(float){-x[i]}, 4), 0, "element %d", i);
  api->buffer_free(dev, buf);
  api->device_close(dev);
  api->shutdown();
  dlclose(h);
}

/* The CPU plugin's ABI 1.1 plan entries, driven by hand: a fill and a kernel prepared once run
 * again on every plan_run (the fill too: a write between runs is overwritten), and malformed
 * commands are refused with a message, nothing prepared. */
static int32_t last_status;
static char last_message[512];
static void keep_error(void *d, int32_t st, const char *m) {
  (void)d;
  last_status = st;
  snprintf(last_message, sizeof last_message, "%s", m);
}

Test(abi_compat, the_cpu_plan_entries_rerun_fills_and_kernels_and_refuse_bad_commands) {
  void *h = dlopen(PARITY_BIN_DIR "/../lib/parity-plugin-cpu.so", RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(h, "%s", dlerror());
  parity_plugin_query_fn query = (parity_plugin_query_fn)dlsym(h, PARITY_PLUGIN_ENTRY_NAME);
  parity_host_api_t host = {.struct_size = sizeof host, .report_error = keep_error, .log = on_log};
  parity_plugin_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  cr_assert_eq(query(PARITY_ABI_MAJOR, PARITY_ABI_MINOR, &host, &info), PARITY_STATUS_OK);
  const parity_plugin_api_t *api = info.api;
  cr_assert(PARITY_HAS_FIELD(api, parity_plugin_api_t, plan_release) && api->plan_prepare && api->plan_run &&
            api->plan_release);
  cr_assert_eq(api->init(), PARITY_STATUS_OK);
  parity_plugin_device_t *dev;
  cr_assert_eq(api->device_open(0, &dev), PARITY_STATUS_OK);
  parity_plugin_buffer_t *buf;
  cr_assert_eq(api->buffer_alloc(dev, 64, &buf), PARITY_STATUS_OK);
  parity_tensor_desc_t tx = {
      .struct_size = sizeof tx, .dtype = PARITY_DTYPE_F32, .rank = 1, .shape = {4}, .strides = {1}, .buffer = buf};
  parity_tensor_desc_t ty = tx;
  ty.offset_bytes = 32;
  parity_op_desc_t op = {.struct_size = sizeof op,
                         .op = PARITY_OP_NEG,
                         .num_inputs = 1,
                         .num_outputs = 1,
                         .inputs = {&tx},
                         .outputs = {&ty}};
  float two = 2.0f;
  parity_plan_command_t cmds[2];
  memset(cmds, 0, sizeof cmds);
  cmds[0].struct_size = cmds[1].struct_size = sizeof cmds[0];
  cmds[0].kind = PARITY_PLAN_COMMAND_FILL;
  cmds[0].buffer = buf;
  cmds[0].size_bytes = 16;
  memcpy(cmds[0].pattern, &two, 4);
  cmds[0].pattern_size = 4;
  cmds[1].kind = PARITY_PLAN_COMMAND_KERNEL;
  cmds[1].op = &op;
  parity_plugin_plan_t *plan = NULL;
  cr_assert_eq(api->plan_prepare(dev, cmds, 2, &plan), PARITY_STATUS_OK, "%s", last_message);
  cr_assert_not_null(plan);
  float junk[8] = {7, 7, 7, 7, 9, 9, 9, 9}, y[4];
  for (int run = 0; run < 3; run++) {
    cr_assert_eq(api->buffer_write(dev, buf, 0, junk, sizeof junk), PARITY_STATUS_OK);
    cr_assert_eq(api->plan_run(dev, plan), PARITY_STATUS_OK);
    cr_assert_eq(api->buffer_read(dev, buf, 32, y, sizeof y), PARITY_STATUS_OK);
    for (int i = 0; i < 4; i++)
      cr_assert_eq(y[i], -2.0f, "run %d element %d: %g (the fill did not rerun)", run, i, y[i]);
  }
  api->plan_release(dev, plan);

  /* refused: a fill past its buffer, an unknown kind, a kernel command without a descriptor */
  cmds[0].size_bytes = 128;
  plan = NULL;
  cr_assert_eq(api->plan_prepare(dev, cmds, 2, &plan), PARITY_STATUS_OUT_OF_RANGE);
  cr_assert_null(plan);
  cr_assert(strstr(last_message, "plan fill"), "%s", last_message);
  cmds[0].size_bytes = 16;
  cmds[0].kind = 77;
  cr_assert_eq(api->plan_prepare(dev, cmds, 2, &plan), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(last_message, "command 0 has kind 77"), "%s", last_message);
  cmds[0].kind = PARITY_PLAN_COMMAND_FILL;
  cmds[1].op = NULL;
  cr_assert_eq(api->plan_prepare(dev, cmds, 2, &plan), PARITY_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(last_message, "command 1 has kind 1 and no descriptor"), "%s", last_message);
  cr_assert_null(plan);
  api->buffer_free(dev, buf);
  api->device_close(dev);
  api->shutdown();
  dlclose(h);
}
